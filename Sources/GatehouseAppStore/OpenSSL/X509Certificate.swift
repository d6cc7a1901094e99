import COpenSSL

/// An owned libcrypto `X509`, parsed from DER and freed with the last reference.
///
/// `@unchecked Sendable`: after parsing, the certificate is only read (libcrypto caches decoded
/// extensions under its own lock), so sharing it between threads is safe.
final class X509Certificate: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Parses exactly one DER certificate; `nil` for anything else, trailing bytes included.
    init?(der: [UInt8]) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let certificate = d2i_X509(nil, &cursor, buffer.count) else { return nil }
            guard let cursor, cursor - base == buffer.count else {
                X509_free(certificate)
                return nil
            }
            return certificate
        }
        guard let parsed else {
            ERR_clear_error()
            return nil
        }
        self.pointer = parsed
    }

    /// Takes ownership of a certificate built in this module.
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        X509_free(pointer)
    }

    /// Whether the certificate carries an extension with the dotted `oid`, critical or not.
    func hasExtension(oid: String) -> Bool {
        guard let object = OBJ_txt2obj(oid, 1) else {
            ERR_clear_error()
            return false
        }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(pointer, object, -1) >= 0
    }

    /// Whether basicConstraints marks the certificate as a CA (`X509_check_ca` returns 1 only
    /// for that; its other non-zero answers are legacy guesses for certificates without it).
    var isCertificateAuthority: Bool {
        X509_check_ca(pointer) == 1
    }

    /// The DER encoding.
    var der: [UInt8] {
        let length = i2d_X509(pointer, nil)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_X509(pointer, &cursor)
        }
        return written == length ? bytes : []
    }

    /// Whether both hold the same certificate.
    func isSame(as other: X509Certificate) -> Bool {
        X509_cmp(pointer, other.pointer) == 0
    }
}
