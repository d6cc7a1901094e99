import GatehouseBase
import GatehouseOutbound
import GatehouseRuntime
import Synchronization

/// The server's side of every project's outbox: one ``OutboxPump`` per project that has
/// something to deliver or email, started when the project first asks (``OutboxHook``) and
/// stopped when the server closes.
final class Deliverer: Sendable {
    let meter = OutboxMeter()
    private let transport: any DeliveryTransport
    /// `nil`: the server sends no email (no `--smtp`).
    let mailer: RedemptionMailTransport?
    private let clock: any ServerClock
    private let random: any RandomSource
    private let logger: Logger
    private let pumps = Mutex<[ObjectIdentifier: OutboxPump]>([:])
    private let closed = Atomic<Bool>(false)

    init(transport: any DeliveryTransport, mailer: RedemptionMailTransport?, clock: any ServerClock, random: any RandomSource,
         logger: Logger)
    {
        self.transport = transport
        self.mailer = mailer
        self.clock = clock
        self.random = random
        self.logger = logger
    }

    /// Takes every project's outbox: those that owe deliveries or emails now, and any that will.
    /// Without `--smtp`, a project's owed emails wait (and the log says so), to go once a
    /// restart names a mail server.
    func start(engine: Engine) async {
        engine.outboxHook.install { [weak self] project in self?.pump(for: project) }
        for project in engine.registry.allProjects() {
            await project.startOutbox()
            guard mailer == nil else { continue }
            let owed = await project.owedMailCount()
            if owed > 0 {
                logger.warning("mail.owed_without_smtp", metadata: ["project": "\(project.id)", "emails": .init(owed)])
            }
        }
    }

    private func pump(for project: Project) {
        guard !closed.load(ordering: .relaxed) else { return }
        let started = pumps.withLock { pumps -> OutboxPump? in
            let key = ObjectIdentifier(project)
            guard pumps[key] == nil else { return nil }
            let pump = OutboxPump(project: project, clock: clock, random: random, transport: transport, mailer: mailer, meter: meter,
                                  logger: logger)
            pumps[key] = pump
            return pump
        }
        started?.start()
    }

    /// Stops every pump and the attempts under way (their deliveries and emails are sent again
    /// after a restart), then the mail sender.
    func close(engine: Engine) async {
        closed.store(true, ordering: .relaxed)
        engine.outboxHook.install(nil)
        let all = pumps.withLock { pumps -> [OutboxPump] in
            defer { pumps = [:] }
            return Array(pumps.values)
        }
        for pump in all { await pump.stop() }
        await mailer?.sender.close()
    }
}
