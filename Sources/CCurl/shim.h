#pragma once
// libcurl (Debian libcurl4-openssl-dev). Its typecheck macros assume a GNU C compiler's view of
// the variadic setters; Swift calls the typed wrappers below instead.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift cannot
// call; each wrapper passes one argument of one type. CURL_GLOBAL_DEFAULT and CURL_ERROR_SIZE
// are macros, and a CURLMsg's result sits in a union.

typedef size_t (*ccurl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode ccurl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

static inline size_t ccurl_error_size(void) {
    return CURL_ERROR_SIZE;
}

static inline CURLcode ccurl_easy_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode ccurl_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}

/// libcurl copies every string option it is given (except POSTFIELDS, which is not used).
static inline CURLcode ccurl_easy_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode ccurl_easy_setopt_pointer(CURL *easy, CURLoption option, const void *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode ccurl_easy_setopt_callback(CURL *easy, CURLoption option, ccurl_data_callback callback) {
    return curl_easy_setopt(easy, option, callback);
}

static inline CURLcode ccurl_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/// Whether `message` reports a finished transfer, and how it ended.
static inline int ccurl_message_is_done(const CURLMsg *message) {
    return message->msg == CURLMSG_DONE;
}

static inline CURLcode ccurl_message_result(const CURLMsg *message) {
    return message->data.result;
}

/// CURLOPT_OPENSOCKETFUNCTION's callback: it makes the socket libcurl connects, and so sees
/// every address a transfer is about to connect to.
typedef curl_socket_t (*ccurl_opensocket_callback)(void *context, curlsocktype purpose, struct curl_sockaddr *address);

static inline CURLcode ccurl_easy_setopt_opensocket(CURL *easy, ccurl_opensocket_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, callback);
}

static inline curl_socket_t ccurl_socket_bad(void) {
    return CURL_SOCKET_BAD;
}

/// The address in a curl_sockaddr, as long as `addrlen` says (a sockaddr_in or sockaddr_in6).
static inline const struct sockaddr *ccurl_sockaddr_address(const struct curl_sockaddr *address) {
    return &address->addr;
}
