import GatehouseAppStore
import Testing

/// `certificates(fromFileBytes:)` reads the file of `--app-store-root=FILE`: DER or PEM.
@Suite struct RootCertificateFiles {
    let certs = "\(Vectors.library)/certs"

    @Test func derFile() throws {
        let der = try Vectors.testCA()
        #expect(try AppStoreVerifier.certificates(fromFileBytes: der) == [der])
    }

    @Test func pemFileIsTheSameCertificate() throws {
        #expect(
            try AppStoreVerifier.certificates(fromFileBytes: Vectors.bytes("\(certs)/testCA.pem")) == [Vectors.testCA()]
        )
        let g3 = try Vectors.bytes("\(Vectors.library)/real-apple-chain/AppleRootCA-G3.pem")
        #expect(try AppStoreVerifier.certificates(fromFileBytes: g3) == [AppStoreVerifier.appleRootCAG3])
    }

    @Test func pemAfterATextDump() throws {
        // These files start with `openssl x509 -text` output.
        let leaf = try Vectors.bytes("\(certs)/testLeaf.pem")
        #expect(leaf.starts(with: Array("Certificate:".utf8)))
        #expect(try AppStoreVerifier.certificates(fromFileBytes: leaf).count == 1)
    }

    @Test func severalPEMBlocks() throws {
        let bundle =
            try Vectors.bytes("\(certs)/testCA.pem") + Array("\n".utf8)
            + Vectors.bytes("\(Vectors.library)/real-apple-chain/AppleRootCA-G3.pem")
        let roots = try AppStoreVerifier.certificates(fromFileBytes: bundle)
        #expect(roots == [try Vectors.testCA(), AppStoreVerifier.appleRootCAG3])
        let verifier = try AppStoreVerifier(rootCertificates: roots)
        _ = try verifier.verify(jws: Vectors.mock("testNotification.jws"))
    }

    @Test func unusableFiles() throws {
        let pem = String(decoding: try Vectors.bytes("\(certs)/testCA.pem"), as: UTF8.self)
        let der = try Vectors.testCA()
        let bad: [[UInt8]] = [
            [], Array("hello".utf8), Array(der.dropLast()), der + [0],
            Array(pem.replacingOccurrences("-----END CERTIFICATE-----", with: "").utf8),
            Array(pem.replacingOccurrences("MII", with: "M*I").utf8),
            Array("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8),
            Array("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n".utf8),
        ]
        for bytes in bad {
            #expect(throws: AppStoreCertificateError.self) { try AppStoreVerifier.certificates(fromFileBytes: bytes) }
        }
    }

    @Test func verifierNeedsUsableRoots() throws {
        #expect(throws: AppStoreCertificateError.self) { try AppStoreVerifier(rootCertificates: []) }
        #expect(throws: AppStoreCertificateError.self) { try AppStoreVerifier(rootCertificates: [[0x30, 0x00]]) }
        #expect(throws: AppStoreCertificateError.self) {
            try AppStoreVerifier(rootCertificates: [Vectors.testCA(), Array("not a certificate".utf8)])
        }
    }
}
