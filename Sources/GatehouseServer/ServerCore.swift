import GatehouseBase
import GatehousePosix
import GatehouseRuntime

/// What every connection and operation shares: the configuration, the projects, the clock,
/// the counters and the logger.
final class ServerCore: Sendable {
    let configuration: ServerConfiguration
    let registry: Registry
    /// Set when the server runs with `--test-clock`; `clock.advance` moves it.
    let manualClock: ManualServerClock?
    let stats: ServerStats
    let logger: Logger
    let operations: [String: Operation]

    init(configuration: ServerConfiguration, registry: Registry, manualClock: ManualServerClock?, logger: Logger) {
        self.configuration = configuration
        self.registry = registry
        self.manualClock = manualClock
        self.stats = ServerStats(startedNanoseconds: EventLoop.monotonicNanoseconds())
        self.logger = logger
        self.operations = Dictionary(uniqueKeysWithValues: Operations.all.map { ($0.name, $0) })
    }

    var clock: any ServerClock { registry.clock }
}
