import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import GatehouseTesting

/// An engine on `directory` for the length of `body`, on the real disk, closed after it.
func withTestEngine<T>(_ options: EngineOptions, in directory: String, _ body: (Engine) async throws -> T) async throws -> T {
    // Recovery reads and syncs the real disk: off the concurrency pool.
    let engine = try await offThePool {
        try Engine.open(
            dataDirectory: directory, fileSystem: NativeFileSystem(), options: options,
            adminKey: "ak_test_" + SystemRandomSource().randomToken(alphabet: .base62, length: 32),
            clock: SystemServerClock(), random: SystemRandomSource(),
            logger: Logger(label: "runtime-test", handler: StreamLogHandler(), logLevel: .warning), onFatal: { _ in }
        )
    }
    do {
        let result = try await body(engine)
        await engine.close()
        return result
    } catch {
        await engine.close()
        throw error
    }
}
