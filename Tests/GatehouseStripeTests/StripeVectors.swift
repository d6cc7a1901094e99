import Foundation
import GatehouseWire
import Testing

/// The Stripe vectors in `Vectors/` (a copy of the team's shared ones, see its README), found
/// from this file's path. A missing file fails the tests that need it; nothing is skipped.
enum StripeVectors {
    struct Missing: Error, CustomStringConvertible {
        let path: String
        var description: String { "Stripe test vector \(path) is missing" }
    }

    /// One case of `stripe-signature-vectors.json`.
    struct SignatureCase: Sendable, CustomTestStringConvertible {
        let id: String
        let secret: String
        let timestamp: Int64?
        let payloadFile: String
        let header: String

        var testDescription: String { id }
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors")

    static func bytes(_ name: String) throws -> [UInt8] {
        let path = root.appendingPathComponent(name).path
        guard let data = FileManager.default.contents(atPath: path) else { throw Missing(path: path) }
        return [UInt8](data)
    }

    static let payloadFiles = [
        "payload-stripe-node-EVENT_PAYLOAD_STRING.json", "payload-stripe-python-DUMMY_WEBHOOK_PAYLOAD.json",
        "payload-stripe-python-DUMMY_V2_WEBHOOK_PAYLOAD.json",
    ]

    /// Every case, in the file's order (read when the suite is built, so each is a test of its own).
    static let signatureCases: [SignatureCase] = {
        guard let bytes = try? bytes("stripe-signature-vectors.json"),
            let cases = (try? JSONParser.parse(bytes))?.objectValue?["cases"]?.arrayValue
        else { return [] }
        return cases.compactMap { value in
            guard let object = value.objectValue, let id = object["id"]?.stringValue,
                let secret = object["secret"]?.stringValue, let payload = object["payload_file"]?.stringValue,
                let header = object["header"]?.stringValue
            else { return nil }
            return SignatureCase(
                id: id, secret: secret, timestamp: object["timestamp"]?.numberValue?.int64, payloadFile: payload,
                header: header)
        }
    }()

    static func signatureCase(_ id: String) -> SignatureCase {
        guard let found = signatureCases.first(where: { $0.id == id }) else {
            preconditionFailure("no signature vector \(id)")
        }
        return found
    }
}
