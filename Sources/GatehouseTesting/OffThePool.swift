import GatehouseBase

/// Runs blocking `body` (a read, a wait for a process) on a thread of its own and answers its
/// result. Neither the Swift concurrency pool nor Dispatch's worker threads are blocked: the
/// suite runs hundreds of tests side by side, and blocked Dispatch workers once used up the
/// thread limit the concurrency pool also draws on, stalling every server under test.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        OSThread.detached(named: "off-the-pool") { continuation.resume(with: Result { try body() }) }
    }
}

/// ``offThePool(_:)`` for a body that cannot fail.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        OSThread.detached(named: "off-the-pool") { continuation.resume(returning: body()) }
    }
}
