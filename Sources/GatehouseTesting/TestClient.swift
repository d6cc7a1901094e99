import Dispatch
import GatehouseBase
public import GatehouseCore
public import GatehousePosix
public import GatehouseWire
import Synchronization

/// A line client for tests. Its blocking reads and writes run on a thread of its own, never on
/// the Swift concurrency pool, which the server under test needs for its own work, and never on
/// Dispatch's worker threads either: the whole suite runs side by side, and hundreds of clients
/// blocked in reads there once used up Dispatch's thread limit, which the concurrency pool
/// draws on too, so the servers could not answer and the reads timed out.
public final class TestClient: @unchecked Sendable {
    private let client: LineClient
    private let worker = ClientThread()
    private var nextID: Int64 = 0

    deinit {
        worker.stop()
    }

    /// Connects; every read gives up after `timeoutMilliseconds`, so a broken server fails the
    /// test instead of hanging it. The default is generous: the whole suite runs its servers side
    /// by side on two cores, and a CI run once saw an answer take over 15 s under that load.
    public init(connectingTo address: HostPort, timeoutMilliseconds: Int = 60_000) throws {
        client = try LineClient(connectingTo: address, timeoutMilliseconds: timeoutMilliseconds)
    }

    public var socket: Socket { client.socket }

    /// Sends one line (a `\n` is added).
    public func send(_ line: String) async throws {
        try await onQueue { try self.client.send(line) }
    }

    /// Sends bytes exactly as given.
    public func sendRaw(_ bytes: [UInt8]) async throws {
        try await onQueue { try self.client.sendRaw(bytes) }
    }

    /// The next line, or `nil` once the server has closed the connection.
    public func readLine() async throws -> String? {
        try await onQueue { try self.client.readLine() }
    }

    /// Whether an answer (or part of one) has arrived and was not read, without waiting for it:
    /// for a test that an answer is held back.
    public func hasUnreadInput() async throws -> Bool {
        try await onQueue { self.client.hasUnreadInput() }
    }

    /// The next line parsed as a JSON object; fails the test's expectations with a clear error
    /// when the server closed the connection or sent something else.
    public func readAnswer() async throws -> JSONObject {
        guard let line = try await readLine() else { throw TestClientError.closed }
        guard let object = try JSONParser.parse(line).objectValue else { throw TestClientError.notAnObject(line) }
        return object
    }

    /// Sends a request object as given and reads its answer.
    public func request(_ request: JSONObject) async throws -> JSONObject {
        try await send(JSONWriter.string(.object(request)))
        return try await readAnswer()
    }

    /// Sends `op` with `parameters` under a fresh numeric id, reads the answer, and checks that
    /// the answer carries the same id.
    public func call(_ op: String, _ parameters: JSONObject = [:]) async throws -> JSONObject {
        nextID += 1
        var request: JSONObject = ["id": .int(nextID), "op": .string(op)]
        request.append(contentsOf: parameters)
        let answer = try await self.request(request)
        guard answer["id"] == .int(nextID) else { throw TestClientError.wrongID(expected: nextID, answer: answer) }
        return answer
    }

    /// `hello` with `key`; throws unless it succeeded.
    @discardableResult
    public func hello(_ key: String) async throws -> JSONObject {
        let answer = try await call("hello", ["key": .string(key)])
        guard answer.isSuccess else { throw TestClientError.failed(answer) }
        return answer
    }

    /// Closes the connection, without reading what the server sends, once the reads and writes
    /// asked for before it are done (on the client's thread, so a pending read never blocks the
    /// caller's).
    public func close() async {
        await withCheckedContinuation { continuation in
            worker.async {
                self.client.close()
                continuation.resume()
            }
        }
    }

    /// Sends end-of-file; the server answers what it has read and closes.
    public func finishSending() {
        client.finishSending()
    }

    private func onQueue<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            worker.async { continuation.resume(with: Result { try body() }) }
        }
    }
}

/// One thread that runs jobs in the order they are given, until stopped.
final class ClientThread: Sendable {
    private struct Queue {
        var jobs: [@Sendable () -> Void] = []
        var stopping = false
    }

    private let queue = Mutex(Queue())
    private let ready = DispatchSemaphore(value: 0)

    /// The thread holds this object until ``stop()`` lets it end.
    init() {
        OSThread.detached(named: "test-client") { [self] in
            while true {
                ready.wait()
                let next = queue.withLock { queue -> (@Sendable () -> Void)?? in
                    if !queue.jobs.isEmpty { return queue.jobs.removeFirst() }
                    return queue.stopping ? .some(nil) : nil
                }
                switch next {
                case .some(.some(let job)): job()
                case .some(.none): return
                case .none: continue
                }
            }
        }
    }

    func async(_ job: @escaping @Sendable () -> Void) {
        queue.withLock { $0.jobs.append(job) }
        ready.signal()
    }

    /// Ends the thread once the jobs given so far have run.
    func stop() {
        queue.withLock { $0.stopping = true }
        ready.signal()
    }
}

public enum TestClientError: Error, CustomStringConvertible {
    case closed
    case notAnObject(String)
    case wrongID(expected: Int64, answer: JSONObject)
    case failed(JSONObject)

    public var description: String {
        switch self {
        case .closed: "the server closed the connection"
        case .notAnObject(let line): "not a JSON object: \(line)"
        case .wrongID(let expected, let answer): "expected id \(expected), got \(JSONWriter.string(.object(answer)))"
        case .failed(let answer): "request failed: \(JSONWriter.string(.object(answer)))"
        }
    }
}

extension JSONObject {
    /// `ok: true`.
    public var isSuccess: Bool { self["ok"] == .bool(true) }

    /// The `error.code` of a failed answer, or `nil` for a success.
    public var errorCode: ErrorCode? {
        guard self["ok"] == .bool(false), let code = self["error"]?.objectValue?["code"]?.stringValue else { return nil }
        return ErrorCode(rawValue: code)
    }

    /// A member that is itself an object.
    public func object(_ key: String) -> JSONObject? { self[key]?.objectValue }

    public func string(_ key: String) -> String? { self[key]?.stringValue }

    public func int(_ key: String) -> Int64? { self[key]?.numberValue?.int64 }
}
