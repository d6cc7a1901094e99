#pragma once
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

// The STACK_OF(X509) accessors, OPENSSL_free and EVP_EC_gen are macros (type-checking casts,
// file and line arguments, a variadic call), which Swift cannot call; these wrappers can be.

static inline STACK_OF(X509) *copenssl_sk_X509_new_null(void) {
    return sk_X509_new_null();
}

static inline int copenssl_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate) {
    return sk_X509_push(stack, certificate);
}

static inline int copenssl_sk_X509_num(const STACK_OF(X509) *stack) {
    return sk_X509_num(stack);
}

static inline X509 *copenssl_sk_X509_value(const STACK_OF(X509) *stack, int index) {
    return sk_X509_value(stack, index);
}

/// Frees the stack only; the certificates in it belong to their owners.
static inline void copenssl_sk_X509_free(STACK_OF(X509) *stack) {
    sk_X509_free(stack);
}

static inline void copenssl_free(void *pointer) {
    OPENSSL_free(pointer);
}

/// A fresh P-256 key pair, or NULL.
static inline EVP_PKEY *copenssl_ec_p256_generate(void) {
    return EVP_EC_gen("P-256");
}

/// MBSTRING_ASC, for X509_NAME_add_entry_by_txt.
static inline int copenssl_mbstring_asc(void) {
    return MBSTRING_ASC;
}
