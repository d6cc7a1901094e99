import GatehouseAppStore
import GatehouseBase
import GatehouseOutbound
import GatehousePosix
import GatehouseRuntime
import Synchronization

/// What every connection and operation shares: the configuration, the projects, the clock,
/// the counters and the logger.
final class ServerCore: Sendable {
    let configuration: ServerConfiguration
    let engine: Engine
    /// Set when the server runs with `--test-clock`; `clock.advance` moves it.
    let manualClock: ManualServerClock?
    let stats: ServerStats
    /// Requests answered, by transport, op and outcome, and how long they took (`/metrics`).
    let meter: RequestMeter
    let logger: Logger
    let operations: [String: Operation]
    /// Verifies App Store signed data against the configured roots; built once, shared by every
    /// connection (it holds only read-only state).
    let appStoreVerifier: AppStoreVerifier
    /// Every outgoing HTTP request of the server, on its own thread; closed at shutdown.
    let outbound: OutboundHTTPClient
    /// What a restore asks Apple with (DESIGN.md, "Asking Apple").
    let appStoreAPI: AppStoreAPIClients
    /// Every project's outbox, delivered off the actors (DESIGN.md, "Outbound delivery").
    let deliverer: Deliverer
    /// Each project's way in for project ops (``ProjectLane``).
    let lanes: ProjectLanes
    /// Bytes every connection holds buffered (``ServerConfiguration/bufferedBytesMax``), kept up
    /// to date by each connection for its own share.
    let bufferedBytes = Atomic<Int>(0)
    /// Set once SIGTERM (or `shutdown()`) began: `/readyz` answers `stopping`.
    private let stopping = Atomic<Bool>(false)

    init(
        configuration: ServerConfiguration, engine: Engine, manualClock: ManualServerClock?, logger: Logger,
        appStoreVerifier: AppStoreVerifier
    ) {
        self.configuration = configuration
        self.appStoreVerifier = appStoreVerifier
        self.engine = engine
        self.manualClock = manualClock
        self.meter = RequestMeter(loops: configuration.ioThreads)
        self.stats = ServerStats(startedNanoseconds: EventLoop.monotonicNanoseconds())
        self.lanes = ProjectLanes(log: engine.log, stats: stats)
        self.logger = logger
        self.operations = Operations.table
        let outbound = OutboundHTTPClient()
        self.outbound = outbound
        self.appStoreAPI = AppStoreAPIClients(http: outbound, configuration: configuration, logger: logger)
        let transport = OutboundDeliveryTransport(client: outbound, allowsPrivate: configuration.outboundAllowPrivate,
                                                  timeout: configuration.outboundTimeout)
        // Validated at start (ServeCommand): no mail server without a public URL for the email's link.
        let mailer = configuration.smtp.flatMap { settings in
            configuration.publicURL.map { RedemptionMailTransport(sender: SMTPSender(settings: settings), publicURL: $0) }
        }
        self.deliverer = Deliverer(transport: transport, mailer: mailer, clock: engine.registry.clock, random: engine.registry.random,
                                   logger: logger)
    }

    var registry: Registry { engine.registry }
    var nowNanoseconds: UInt64 { configuration.connectionClock.nowNanoseconds() }

    /// Moves the server-wide count of buffered bytes by a connection's change; answers whether it
    /// is now over the budget.
    func accountBuffered(_ delta: Int) -> Bool {
        bufferedBytes.add(delta, ordering: .relaxed).newValue > configuration.bufferedBytesMax
    }

    var bufferedBytesNow: Int { bufferedBytes.load(ordering: .relaxed) }
    var isOverBufferedBytesBudget: Bool { bufferedBytesNow > configuration.bufferedBytesMax }
    var clock: any ServerClock { registry.clock }

    var isStopping: Bool { stopping.load(ordering: .relaxed) }
    func beginStopping() { stopping.store(true, ordering: .relaxed) }
}
