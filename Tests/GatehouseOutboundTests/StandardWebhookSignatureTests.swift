import Foundation
import GatehouseBase
import GatehouseOutbound
import GatehouseTesting
import Testing

/// Webhook signatures as Standard Webhooks define them, checked against the specification's
/// vector and against its Python library.
@Suite struct StandardWebhookSignatureTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let id = "msg_p5jXN8AQM9LWM0D4loKWxJek"
    static let body = Array(#"{"test": 2432232314}"#.utf8)

    @Test func signsTheKnownAnswerVector() throws {
        let signature = try StandardWebhookSignature.signature(id: Self.id, timestampSeconds: 1_614_265_330, body: Self.body, secret: Self.secret)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func aRotationSignsWithBothSecretsCurrentFirst() throws {
        let previous = "whsec_" + Base64.encode(Array(repeating: 7, count: 32), alphabet: .standard, padded: true)
        let header = try StandardWebhookSignature.header(
            id: Self.id, timestampSeconds: 1_614_265_330, body: Self.body, secrets: [Self.secret, previous])
        let parts = header.split(separator: " ").map(String.init)
        #expect(parts.count == 2)
        #expect(parts.first == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(parts.last == (try StandardWebhookSignature.signature(id: Self.id, timestampSeconds: 1_614_265_330, body: Self.body, secret: previous)))
        #expect(parts.first != parts.last)
    }

    @Test(arguments: ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_", "whsec_not base64!", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS"])
    func aSecretThatIsNotWhsecBase64IsRefusedWithoutBeingNamed(secret: String) {
        #expect(StandardWebhookSignature.key(of: secret) == nil)
        #expect {
            try StandardWebhookSignature.signature(id: Self.id, timestampSeconds: 1, body: Self.body, secret: secret)
        } throws: { error in
            let error = error as? OutboundError
            return error?.code == .invalidRequest && error?.message == "a webhook secret is not whsec_ and base64"
        }
    }

    /// Python's `standardwebhooks` (the specification's own library) verifies a header this code
    /// made, during a rotation, at the current time (it refuses timestamps five minutes off).
    @Test func pythonsStandardWebhooksVerifiesTheHeader() async throws {
        let previous = "whsec_" + Base64.encode(Array(repeating: 9, count: 24), alphabet: .standard, padded: true)
        let now = Int64(Date().timeIntervalSince1970)
        let body = Array(#"{"api_version":"1.0","event":{"id":"evt_1_0","note":"caf\u00e9 ☕"}}"#.utf8)
        let header = try StandardWebhookSignature.header(id: "evt_1_0", timestampSeconds: now, body: body, secrets: [previous, Self.secret])
        let directory = try PythonProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/body.json"
        try Data(body).write(to: URL(fileURLWithPath: path))
        for secret in [Self.secret, previous] {
            let output = try await PythonProcess.run(Self.verify, arguments: [secret, "evt_1_0", String(now), header, path])
            #expect(output == "verified\n")
        }
        let wrong = "whsec_" + Base64.encode(Array(repeating: 1, count: 24), alphabet: .standard, padded: true)
        let refused = try await PythonProcess.run(Self.verify, arguments: [wrong, "evt_1_0", String(now), header, path])
        #expect(refused == "refused\n")
    }

    private static let verify = """
        import sys
        from standardwebhooks import Webhook, WebhookVerificationError
        secret, msg_id, timestamp, signature, path = sys.argv[1:6]
        with open(path, "rb") as f:
            body = f.read()
        headers = {"webhook-id": msg_id, "webhook-timestamp": timestamp, "webhook-signature": signature}
        try:
            Webhook(secret).verify(body, headers)
            print("verified")
        except WebhookVerificationError:
            print("refused")
        """
}
