import Foundation
import Synchronization
import Testing

/// How the suite runs in one process: the servers under test share the concurrency pool's two
/// threads with every test that is running, so only a bounded number of tests may run at once
/// (the test bundle sets `SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH` when it loads,
/// Sources/CGatehouseTestRun).
@Suite struct TestRun {
    private static let running = Mutex((now: 0, most: 0))

    @Test(arguments: 0..<40)
    func onlyABoundedNumberOfTestCasesRunAtOnce(case: Int) async throws {
        let width = try #require(ProcessInfo.processInfo.environment["SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH"].flatMap(Int.init))
        #expect(width <= 16)
        Self.running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
        // Each yield lets every other runnable case take a turn: unbounded, all forty are
        // running before any of them ends.
        for _ in 0..<100 { await Task.yield() }
        let most = Self.running.withLock { running in
            running.now -= 1
            return running.most
        }
        #expect(most <= width)
    }
}
