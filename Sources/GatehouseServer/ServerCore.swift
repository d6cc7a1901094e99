import GatehouseBase
import GatehousePosix
import GatehouseRuntime

/// What every connection and operation shares: the configuration, the projects, the clock,
/// the counters and the logger.
final class ServerCore: Sendable {
    let configuration: ServerConfiguration
    let engine: Engine
    /// Set when the server runs with `--test-clock`; `clock.advance` moves it.
    let manualClock: ManualServerClock?
    let stats: ServerStats
    let logger: Logger
    let operations: [String: Operation]

    init(configuration: ServerConfiguration, engine: Engine, manualClock: ManualServerClock?, logger: Logger) {
        self.configuration = configuration
        self.engine = engine
        self.manualClock = manualClock
        self.stats = ServerStats(startedNanoseconds: EventLoop.monotonicNanoseconds())
        self.logger = logger
        self.operations = Dictionary(uniqueKeysWithValues: Operations.all.map { ($0.name, $0) })
    }

    var registry: Registry { engine.registry }
    var clock: any ServerClock { registry.clock }
}
