import Foundation
import GatehouseBase
import GatehouseHTTP
import GatehousePosix
public import GatehouseWire
#if canImport(Glibc)
import Glibc
#endif

/// A real webhook endpoint for the outbox's tests: Tests/Support/webhook_receiver.py, a Python
/// HTTP server that checks every delivery's signature with the `standardwebhooks` package (the
/// reference implementation, not ours), records it, and answers as ``script(answers:default:)``
/// says. Requests to it run on a ``TestHTTPClient``'s thread and the waits for the process off
/// the concurrency pool.
public final class WebhookReceiver: Sendable {
    /// One answer of the script.
    public struct Answer: Sendable {
        public var status: Int
        /// The `Retry-After` header's value, when there is one.
        public var retryAfter: String?
        /// How long the receiver waits before answering (a slow or timing-out endpoint).
        public var delay: Duration
        public var body: String

        public init(status: Int, retryAfter: String? = nil, delay: Duration = .zero, body: String = "") {
            self.status = status
            self.retryAfter = retryAfter
            self.delay = delay
            self.body = body
        }

        public static let ok = Answer(status: 200)
    }

    /// A request as the receiver saw it.
    public struct ReceivedDelivery: Sendable {
        /// 1 for the first request to arrive, then 2…
        public let order: Int
        public let path: String
        public let webhookID: String?
        public let timestamp: String?
        public let signature: String?
        public let authorization: String?
        public let contentType: String?
        /// Per secret given to ``start(secrets:)``, in order: whether one of the signatures matched it.
        public let verified: [Bool]
        /// Per secret: why it did not verify (`nil` where it did).
        public let errors: [String?]
        /// The status the script answered it with.
        public let status: Int
        public let body: [UInt8]

        /// Why the first secret that did not verify failed, or `nil` when every one did.
        public var error: String? { errors.lazy.compactMap { $0 }.first }

        /// The body's `event` member (RevenueCat's envelope), or `nil` when it has none.
        public var event: JSONObject? { envelope?["event"]?.objectValue }

        /// The body as JSON, or `nil` when it is not an object.
        public var envelope: JSONObject? { (try? JSONParser.parse(body))?.objectValue }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: UInt16
    private let process: ChildProcess
    private let directory: String

    /// The URL a webhook under test is configured with.
    public var url: String { "http://127.0.0.1:\(port)/hook" }

    private init(port: UInt16, process: ChildProcess, directory: String) {
        self.port = port
        self.process = process
        self.directory = directory
    }

    /// Starts a receiver that checks every delivery against each of `secrets` (`whsec_…`).
    public static func start(secrets: [String]) async throws -> WebhookReceiver {
        precondition(!secrets.isEmpty, "a receiver checks signatures against at least one secret")
        let directory = try PythonProcess.temporaryDirectory()
        let logs = directory + "/receiver"
        let arguments = secrets.flatMap { ["--secret", $0] }
        let process = try await ChildProcess.start(["python3", scriptPath] + arguments, logs: logs)
        guard let port = await offThePool({ readPort(from: logs + ".out", while: process) }) else {
            process.signal(SIGKILL)
            let (status, _, errors) = await process.finish()
            try? FileManager.default.removeItem(atPath: directory)
            // A ModuleNotFoundError here means scripts/install-packages.sh has not been run.
            throw Failure(description: "webhook receiver exited with status \(status) before listening: \(errors)")
        }
        return WebhookReceiver(port: port, process: process, directory: directory)
    }

    /// Answers the next requests with `answers`, one each in order, and every later one with `default`.
    public func script(answers: [Answer], default fallback: Answer = .ok) async throws {
        try await control(["answers": .array(answers.map { .object($0.json) }), "default": .object(fallback.json)])
    }

    /// Checks signatures' timestamps against `unixSeconds` instead of the real time, for a
    /// server whose test clock has moved (`nil`: the real time again).
    public func checkTimestamps(asOf unixSeconds: Int64?) async throws {
        try await control(["now": unixSeconds.map { .int($0) } ?? .null])
    }

    /// Every request received so far, oldest first.
    public func deliveries() async throws -> [ReceivedDelivery] {
        let response = try await request("GET", "/_deliveries")
        guard response.status == 200 else { throw Failure(description: "GET /_deliveries answered \(response.status)") }
        return try JSONDecoder().decode([Recorded].self, from: Data(response.body)).map(\.delivery)
    }

    /// Stops the receiver and waits for it to exit.
    public func stop() async {
        process.signal(SIGTERM)
        _ = await process.finish()
        let directory = self.directory
        await offThePool { try? FileManager.default.removeItem(atPath: directory) }
    }

    private func control(_ object: JSONObject) async throws {
        let response = try await request("POST", "/_control", body: JSONWriter.serialize(.object(object)))
        guard response.status == 200 else { throw Failure(description: "POST /_control answered \(response.status)") }
    }

    private func request(_ method: String, _ target: String, body: [UInt8] = []) async throws -> HTTPParsedResponse {
        let address = HostPort(host: "127.0.0.1", port: port)
        let client = try await offThePool { try TestHTTPClient(connectingTo: address, timeoutMilliseconds: 10_000) }
        // A request that throws leaves the socket to the client's deinit.
        let response = try await client.request(method, target, headers: [("Content-Type", "application/json")], body: body)
        await client.close()
        return response
    }

    /// The first line the script prints, its port; `nil` if it exits first. Waits at most 30 s
    /// (Python's start on a loaded machine), polling, since the output goes to a file.
    private static func readPort(from path: String, while process: ChildProcess) -> UInt16? {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), let end = text.firstIndex(of: "\n") {
                return UInt16(text[..<end])
            }
            if process.hasExited() { return nil }
            usleep(10_000)
        }
        return nil
    }

    /// Tests/Support/webhook_receiver.py in this checkout, found from this file's path.
    private static let scriptPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Support/webhook_receiver.py").path
}

extension WebhookReceiver.Answer {
    fileprivate var json: JSONObject {
        var object: JSONObject = ["status": .int(status), "delay_ms": .int(Int64(delay.wholeMilliseconds)), "body": .string(body)]
        if let retryAfter { object["retry_after"] = .string(retryAfter) }
        return object
    }
}

/// A delivery as GET /_deliveries writes it.
private struct Recorded: Decodable {
    let order: Int
    let path: String
    let webhook_id: String?
    let webhook_timestamp: String?
    let webhook_signature: String?
    let authorization: String?
    let content_type: String?
    let verified: [Bool]
    let errors: [String?]
    let status: Int
    let body_base64: String

    var delivery: WebhookReceiver.ReceivedDelivery {
        WebhookReceiver.ReceivedDelivery(
            order: order, path: path, webhookID: webhook_id, timestamp: webhook_timestamp, signature: webhook_signature,
            authorization: authorization, contentType: content_type, verified: verified, errors: errors, status: status,
            body: Array(Data(base64Encoded: body_base64) ?? Data()))
    }
}
