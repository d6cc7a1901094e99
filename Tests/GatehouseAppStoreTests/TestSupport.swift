import Foundation
import GatehouseAppStore
import GatehouseWire
import Testing

/// The App Store test vectors, copied from the team's shared vectors into `Tests/Fixtures/vectors`
/// (see its README) and found from this file's path. A missing file fails the tests that need it
/// with a message saying where it was looked for; nothing is skipped.
enum Vectors {
    struct Missing: Error, CustomStringConvertible {
        let path: String
        var description: String {
            "test vector \(path) is missing (Tests/Fixtures/vectors holds a copy of ../shared/vectors)"
        }
    }

    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Tests/GatehouseAppStoreTests
        .deletingLastPathComponent()  // Tests
        .appendingPathComponent("Fixtures/vectors")

    static func bytes(_ relativePath: String) throws -> [UInt8] {
        let url = root.appendingPathComponent(relativePath)
        guard let data = FileManager.default.contents(atPath: url.path) else { throw Missing(path: url.path) }
        return [UInt8](data)
    }

    static func text(_ relativePath: String) throws -> String {
        String(decoding: try bytes(relativePath), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func json(_ relativePath: String) throws -> JSONObject {
        guard let object = try JSONParser.parse(bytes(relativePath)).objectValue else {
            throw Missing(path: relativePath + " (not a JSON object)")
        }
        return object
    }

    // Apple's library vectors.
    static let library = "apple-app-store-server-library"
    static func mock(_ name: String) throws -> String { try text("\(library)/mock_signed_data/\(name)") }
    static func model(_ name: String) throws -> JSONObject { try json("\(library)/models/\(name)") }
    static func decodedPayload(_ name: String) throws -> JSONObject {
        try json("\(library)/decoded/\(name).payload.json")
    }
    static func testCA() throws -> [UInt8] { try bytes("\(library)/certs/testCA.der") }

    /// A certificate from `certs/` as DER (PEM files go through the verifier's file loader).
    static func certificate(_ name: String) throws -> [UInt8] {
        let certificates = try AppStoreVerifier.certificates(fromFileBytes: bytes("\(library)/certs/\(name)"))
        guard certificates.count == 1 else { throw Missing(path: name + " (not exactly one certificate)") }
        return certificates[0]
    }

    static func realAppleChain(_ name: String) throws -> [UInt8] {
        try bytes("\(library)/real-apple-chain/\(name).der")
    }
}

/// Instants the tests use, in UNIX milliseconds.
enum Instant {
    /// 2025-11-01, the `EFFECTIVE_DATE` of Apple's chain tests.
    static let appleEffectiveDate: Int64 = 1_761_962_975_000
    /// 2042-04-12: Apple's test certificates have expired.
    static let afterTestCertificates: Int64 = 2_280_946_846_000
    /// 2034-01-01.
    static let year2034: Int64 = 2_019_686_400_000
    static let year2020: Int64 = 1_577_836_800_000
    static let year2025: Int64 = 1_735_689_600_000
    static let year2030: Int64 = 1_893_456_000_000
    static let year2031: Int64 = 1_924_992_000_000
}

/// A verifier trusting Apple's test root, with the clock fixed at 2025-11-01.
func testCAVerifier() throws -> AppStoreVerifier {
    try AppStoreVerifier(rootCertificates: [Vectors.testCA()], currentTimeMilliseconds: { Instant.appleEffectiveDate })
}

/// A verifier trusting the generated chain's root, with the clock fixed at 2025-11-01.
func verifier(trusting chains: AppStoreTestChain...) throws -> AppStoreVerifier {
    try AppStoreVerifier(
        rootCertificates: chains.map(\.rootDER), currentTimeMilliseconds: { Instant.appleEffectiveDate })
}

/// The verification error `body` throws; `nil` when it succeeds (any other error is recorded
/// as an issue, and also gives `nil`).
func verificationError<T>(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) -> AppStoreVerificationError? {
    do {
        _ = try body()
        return nil
    } catch let error as AppStoreVerificationError {
        return error
    } catch {
        Issue.record("unexpected error: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Expects `body` to fail with `invalidSignature`, optionally with a reason containing `reason`.
func expectInvalidSignature<T>(
    reason: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> T
) {
    let error = verificationError(sourceLocation: sourceLocation, body)
    #expect(error?.code == .invalidSignature, "got \(String(describing: error))", sourceLocation: sourceLocation)
    if let reason, let error {
        #expect(error.reason.contains(reason), "reason: \(error.reason)", sourceLocation: sourceLocation)
    }
}

/// Expects `body` to fail with `wrongApp`, optionally with a reason containing `reason`.
func expectWrongApp<T>(
    reason: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> T
) {
    let error = verificationError(sourceLocation: sourceLocation, body)
    #expect(error?.code == .wrongApp, "got \(String(describing: error))", sourceLocation: sourceLocation)
    if let reason, let error {
        #expect(error.reason.contains(reason), "reason: \(error.reason)", sourceLocation: sourceLocation)
    }
}

/// The JWS with one character of part `part` (0 header, 1 payload, 2 signature) replaced.
func tampered(_ jws: String, part: Int, at offset: Int = 10) -> String {
    var parts = jws.split(separator: ".", omittingEmptySubsequences: false).map { Array($0.utf8) }
    let index = min(offset, parts[part].count - 1)
    parts[part][index] = parts[part][index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
    return parts.map { String(decoding: $0, as: UTF8.self) }.joined(separator: ".")
}

extension JSONObject {
    /// A copy with `key` set to `value`.
    func with(_ key: String, _ value: JSONValue) -> JSONObject {
        var copy = self
        copy[key] = value
        return copy
    }
}

extension String {
    /// Every `target` replaced (without Foundation, which most of these files do not import).
    func replacingOccurrences(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }

    /// Without leading and trailing spaces.
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()
        return String(String.UnicodeScalarView(scalars))
    }
}
