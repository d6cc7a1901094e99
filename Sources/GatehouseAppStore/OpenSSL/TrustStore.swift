import COpenSSL

/// The configured roots as a libcrypto `X509_STORE`, and path validation against them.
///
/// `@unchecked Sendable`: the store is filled once in `init` and never changed after; OpenSSL 3
/// supports verifying against one store from many threads, each with its own `X509_STORE_CTX`.
final class TrustStore: @unchecked Sendable {
    private let store: OpaquePointer
    /// The roots, kept alive for as long as the store (the store also holds its own references).
    let roots: [X509Certificate]

    /// `nil` only when libcrypto cannot allocate.
    init?(roots: [X509Certificate]) {
        guard let store = X509_STORE_new() else { return nil }
        for root in roots where X509_STORE_add_cert(store, root.pointer) != 1 {
            X509_STORE_free(store)
            ERR_clear_error()
            return nil
        }
        // Deliberately no X509_V_FLAG_X509_STRICT (Apple's test certificates carry no authority
        // key identifier, as Apple's own libraries note) and no X509_V_FLAG_PARTIAL_CHAIN (the
        // path must end at a configured, self-signed root).
        self.store = store
        self.roots = roots
    }

    deinit {
        X509_STORE_free(store)
    }

    /// Validates the path `leaf` ← `intermediate` ← a configured root at `time` (seconds since
    /// 1970), and returns nothing or a reason. The intermediate is the only untrusted
    /// certificate offered, and the path that OpenSSL builds must use it: exactly three
    /// certificates, the second being `intermediate`.
    func validate(leaf: X509Certificate, intermediate: X509Certificate, time: Int) -> String? {
        defer { ERR_clear_error() }
        // The untrusted stack outlives the context that points at it.
        guard let untrusted = copenssl_sk_X509_new_null() else { return "out of memory" }
        defer { copenssl_sk_X509_free(untrusted) }
        guard copenssl_sk_X509_push(untrusted, intermediate.pointer) > 0 else { return "out of memory" }
        guard let context = X509_STORE_CTX_new() else { return "out of memory" }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf.pointer, untrusted) == 1 else {
            return "cannot set up certificate verification"
        }
        X509_STORE_CTX_set_time(context, 0, time_t(time))
        guard X509_verify_cert(context) == 1 else {
            let code = X509_STORE_CTX_get_error(context)
            let depth = X509_STORE_CTX_get_error_depth(context)
            let text = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
            return "certificate chain: \(text) (depth \(depth))"
        }
        guard let chain = X509_STORE_CTX_get0_chain(context), copenssl_sk_X509_num(chain) == 3,
            let second = copenssl_sk_X509_value(chain, 1), X509_cmp(second, intermediate.pointer) == 0
        else {
            return "certificate chain does not run leaf, intermediate, configured root"
        }
        return nil
    }
}
