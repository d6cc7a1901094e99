import COpenSSL

/// Builds the X.509 v3 certificates of ``AppStoreTestChain`` with libcrypto.
struct TestCertificateBuilder {
    var subject: String
    var issuer: String
    var serial: Int
    /// Validity bounds in seconds since 1970.
    var notBefore: Int
    var notAfter: Int
    /// `true`: basicConstraints CA:TRUE and keyUsage keyCertSign; `false`: CA:FALSE and
    /// digitalSignature.
    var isCertificateAuthority: Bool
    /// An OID to carry as an extension holding DER NULL, as Apple's markers do.
    var markerOID: String?

    /// The certificate for `publicKey`, signed (ECDSA with SHA-256) by `signingKey`; `nil`
    /// when libcrypto refuses a step.
    func build(publicKey: P256PrivateKey, signingKey: P256PrivateKey) -> X509Certificate? {
        defer { ERR_clear_error() }
        guard let pointer = X509_new() else { return nil }
        let certificate = X509Certificate(owning: pointer)  // freed on every early return
        guard X509_set_version(pointer, Int(X509_VERSION_3)) == 1,
            ASN1_INTEGER_set(X509_get_serialNumber(pointer), serial) == 1,
            ASN1_TIME_set(X509_getm_notBefore(pointer), time_t(notBefore)) != nil,
            ASN1_TIME_set(X509_getm_notAfter(pointer), time_t(notAfter)) != nil,
            addCommonName(subject, to: X509_get_subject_name(pointer)),
            addCommonName(issuer, to: X509_get_issuer_name(pointer)),
            X509_set_pubkey(pointer, publicKey.pointer) == 1
        else { return nil }
        let constraints = isCertificateAuthority ? "critical,CA:TRUE" : "critical,CA:FALSE"
        let usage = isCertificateAuthority ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature"
        guard addExtension(NID_basic_constraints, constraints, to: pointer),
            addExtension(NID_key_usage, usage, to: pointer)
        else { return nil }
        if let markerOID, !addMarker(markerOID, to: pointer) { return nil }
        guard X509_sign(pointer, signingKey.pointer, EVP_sha256()) > 0 else { return nil }
        return certificate
    }

    private func addCommonName(_ name: String, to x509Name: OpaquePointer?) -> Bool {
        guard let x509Name else { return false }
        let bytes = Array(name.utf8)
        return X509_NAME_add_entry_by_txt(x509Name, "CN", copenssl_mbstring_asc(), bytes, Int32(bytes.count), -1, 0)
            == 1
    }

    private func addExtension(_ nid: Int32, _ value: String, to certificate: OpaquePointer) -> Bool {
        guard let extensionValue = X509V3_EXT_conf_nid(nil, nil, nid, value) else { return false }
        defer { X509_EXTENSION_free(extensionValue) }
        return X509_add_ext(certificate, extensionValue, -1) == 1
    }

    private func addMarker(_ oid: String, to certificate: OpaquePointer) -> Bool {
        guard let object = OBJ_txt2obj(oid, 1) else { return false }
        defer { ASN1_OBJECT_free(object) }
        guard let value = ASN1_OCTET_STRING_new() else { return false }
        defer { ASN1_OCTET_STRING_free(value) }
        let derNull: [UInt8] = [0x05, 0x00]
        guard ASN1_OCTET_STRING_set(value, derNull, Int32(derNull.count)) == 1,
            let extensionValue = X509_EXTENSION_create_by_OBJ(nil, object, 0, value)
        else { return false }
        defer { X509_EXTENSION_free(extensionValue) }
        return X509_add_ext(certificate, extensionValue, -1) == 1
    }
}
