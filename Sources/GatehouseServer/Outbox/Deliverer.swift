import GatehouseBase
import GatehouseRuntime
import Synchronization

/// The server's side of every project's outbox: one ``OutboxPump`` per project that has
/// something to deliver, started when the project first asks (``OutboxHook``) and stopped when
/// the server closes.
final class Deliverer: Sendable {
    let meter = OutboxMeter()
    private let transport: any DeliveryTransport
    private let clock: any ServerClock
    private let random: any RandomSource
    private let pumps = Mutex<[ObjectIdentifier: OutboxPump]>([:])
    private let closed = Atomic<Bool>(false)

    init(transport: any DeliveryTransport, clock: any ServerClock, random: any RandomSource) {
        self.transport = transport
        self.clock = clock
        self.random = random
    }

    /// Takes every project's outbox: those that owe deliveries now, and any that will.
    func start(engine: Engine) async {
        engine.outboxHook.install { [weak self] project in self?.pump(for: project) }
        for project in engine.registry.allProjects() { await project.startOutbox() }
    }

    private func pump(for project: Project) {
        guard !closed.load(ordering: .relaxed) else { return }
        let started = pumps.withLock { pumps -> OutboxPump? in
            let key = ObjectIdentifier(project)
            guard pumps[key] == nil else { return nil }
            let pump = OutboxPump(project: project, clock: clock, random: random, transport: transport, meter: meter)
            pumps[key] = pump
            return pump
        }
        started?.start()
    }

    /// Stops every pump and the attempts under way (their deliveries are sent again after a restart).
    func close(engine: Engine) async {
        closed.store(true, ordering: .relaxed)
        engine.outboxHook.install(nil)
        let all = pumps.withLock { pumps -> [OutboxPump] in
            defer { pumps = [:] }
            return Array(pumps.values)
        }
        for pump in all { await pump.stop() }
    }
}
