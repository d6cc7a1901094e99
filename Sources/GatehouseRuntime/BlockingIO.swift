import Dispatch

/// Runs blocking file work (snapshot writes, reads, renames) on a thread of its own, never on
/// the Swift concurrency pool: two cores here, and a pool thread blocked on fsync stalls half
/// the server.
final class BlockingIO: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}

/// A first-come, first-served lock for async code, so long operations (a checkpoint) never
/// interleave at their suspension points.
actor AsyncSerialGate {
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        if !busy {
            busy = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func leave() {
        if waiters.isEmpty {
            busy = false
        } else {
            waiters.removeFirst().resume()
        }
    }

    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await enter()
        do {
            let result = try await body()
            leave()
            return result
        } catch {
            leave()
            throw error
        }
    }
}
