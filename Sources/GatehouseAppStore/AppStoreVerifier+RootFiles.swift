extension AppStoreVerifier {
    /// The certificates in a trust-anchor file (`--app-store-root=FILE`): one DER certificate,
    /// or PEM text with one or more `CERTIFICATE` blocks. Each is checked to parse.
    public static func certificates(fromFileBytes bytes: [UInt8]) throws(AppStoreCertificateError) -> [[UInt8]] {
        if X509Certificate(der: bytes) != nil { return [bytes] }
        guard let blocks = PEM.certificates(in: bytes) else {
            throw AppStoreCertificateError(reason: "a PEM certificate block is damaged")
        }
        guard !blocks.isEmpty else {
            throw AppStoreCertificateError(reason: "neither a DER certificate nor PEM with a CERTIFICATE block")
        }
        for (index, der) in blocks.enumerated() where X509Certificate(der: der) == nil {
            throw AppStoreCertificateError(reason: "PEM block \(index) is not a certificate")
        }
        return blocks
    }
}
