import GatehouseBase
import GatehouseCore
import GatehouseRuntime
import Synchronization

/// One attempt at one delivery, from its body to what the answer means. The real one renders,
/// signs and sends through libcurl (``OutboundDeliveryTransport``).
protocol DeliveryTransport: Sendable {
    func attempt(_ delivery: DueDelivery, projectID: ProjectID, timestampSeconds: Int64) async -> AttemptReport
}

/// What an attempt came to.
struct AttemptReport: Sendable {
    var answer: AttemptAnswer
    var status: Int?
    var error: String?
    var latencyMs: Int64
}

/// Delivers one project's outbox (DESIGN.md, "Outbound delivery"): its webhooks and pushes, and
/// its redemption links' emails when the server sends email. A task of its own loops: it logs
/// the outcomes that came back, takes what is due from the project (at most 16 in flight a
/// target, and 16 emails), starts each attempt as a task that waits on the outgoing-HTTP or the
/// SMTP thread, and sleeps on the server's clock until the next delivery or email falls due, an
/// attempt ends or the project says new ones are owed. Nothing here runs on the project's actor
/// but the short takes and settles, and no attempt waits for another target's: one slow endpoint
/// holds only its own 16.
final class OutboxPump: Sendable {
    let project: Project
    private let clock: any ServerClock
    private let random: any RandomSource
    private let transport: any DeliveryTransport
    /// `nil`: the server sends no email (no `--smtp`), and what is owed stays owed.
    private let mailer: RedemptionMailTransport?
    private let meter: OutboxMeter
    private let logger: Logger
    private let wake = WakeSignal()
    /// Outcomes back from their attempts, not yet logged.
    private let outcomes = Mutex<[DeliveryOutcome]>([])
    private let mailOutcomes = Mutex<[MailOutcome]>([])
    private let loop = Mutex<Task<Void, Never>?>(nil)
    /// Attempts under way, so that closing waits for none and cancels all.
    private let attempts = Mutex<[UInt64: Task<Void, Never>]>([:])
    private let nextAttempt = Atomic<UInt64>(0)

    init(project: Project, clock: any ServerClock, random: any RandomSource, transport: any DeliveryTransport,
         mailer: RedemptionMailTransport?, meter: OutboxMeter, logger: Logger)
    {
        self.project = project
        self.clock = clock
        self.random = random
        self.transport = transport
        self.mailer = mailer
        self.meter = meter
        self.logger = logger
    }

    func start() {
        let task = Task { [self] in
            await project.listenForDeliveries { [wake] in wake.notify() }
            await run()
        }
        loop.withLock { $0 = task }
    }

    /// Stops the loop and every attempt under way; their outcomes are not logged, so those
    /// deliveries are sent again after a restart (at least once).
    func stop() async {
        let task = loop.withLock { $0 }
        task?.cancel()
        wake.notify()
        let running = attempts.withLock { Array($0.values) }
        for attempt in running { attempt.cancel() }
        await task?.value
    }

    private func run() async {
        while !Task.isCancelled {
            let settled = outcomes.withLock { outcomes -> [DeliveryOutcome] in
                defer { outcomes = [] }
                return outcomes
            }
            let settledMail = mailOutcomes.withLock { outcomes -> [MailOutcome] in
                defer { outcomes = [] }
                return outcomes
            }
            var refused = false
            if !settled.isEmpty, await project.settleDeliveries(settled) == nil { refused = true }
            if !settledMail.isEmpty, await project.settleMail(settledMail) == nil { refused = true }
            if refused {
                // The log refuses writes (a full disk, a restore under way): what was not logged is
                // due again, so wait before sending it rather than send it over and over.
                try? await Task.sleep(for: .seconds(1))
            }
            guard !Task.isCancelled, !project.published.isDeleted else { return }
            let (due, deliveryDueMs) = await project.takeDueDeliveries()
            var nextDueMs = deliveryDueMs
            for delivery in due {
                launch({ await self.attempt(delivery) }, then: { outcome in self.outcomes.withLock { $0.append(outcome) } })
            }
            if let mailer {
                let (mails, nextMailMs) = await project.takeDueMail(publicURL: mailer.publicURL)
                for mail in mails {
                    launch({ await self.attempt(mail, with: mailer) }, then: { outcome in self.mailOutcomes.withLock { $0.append(outcome) } })
                }
                nextDueMs = [nextDueMs, nextMailMs].compactMap { $0 }.min()
            }
            await wake.wait(untilMs: nextDueMs, on: clock)
        }
    }

    /// Runs `attempt` as a task of its own, and hands its outcome to `keep` unless the pump stopped meanwhile.
    private func launch<Outcome: Sendable>(_ attempt: @escaping @Sendable () async -> Outcome,
                                           then keep: @escaping @Sendable (Outcome) -> Void)
    {
        let number = nextAttempt.add(1, ordering: .relaxed).newValue
        let task = Task { [self] in
            let outcome = await attempt()
            attempts.withLock { _ = $0.removeValue(forKey: number) }
            guard !Task.isCancelled else { return }
            keep(outcome)
            wake.notify()
        }
        attempts.withLock { $0[number] = task }
    }

    private func attempt(_ delivery: DueDelivery) async -> DeliveryOutcome {
        let startMs = clock.nowMs()
        let report = await transport.attempt(delivery, projectID: project.id, timestampSeconds: startMs / 1000)
        let result = DeliverySchedule.result(afterAttempt: Int(delivery.attempt), answer: report.answer, nowMs: clock.nowMs(),
                                             randomFraction: randomFraction())
        meter.record(kind: delivery.target.kind, result: result, latencyMs: report.latencyMs)
        let attempt = DeliveryAttempt(event: EventKey(delivery.event), attempt: delivery.attempt, atMs: startMs,
                                      status: report.status, latencyMs: report.latencyMs,
                                      error: report.answer == .success ? nil : report.error)
        return DeliveryOutcome(target: delivery.target, attempt: attempt, result: result)
    }

    private func attempt(_ mail: DueMail, with mailer: RedemptionMailTransport) async -> MailOutcome {
        let report = await mailer.attempt(mail, projectID: project.id, dateMs: clock.nowMs())
        let result = MailOutcome.result(afterAttempt: Int(mail.attempt), answer: report.answer, nowMs: clock.nowMs(),
                                        randomFraction: randomFraction())
        meter.record(kind: OutboxMeter.emailKind, result: result.deliveryResult, latencyMs: report.latencyMs)
        var metadata: Logger.Metadata = [
            "project": "\(project.id)", "purchase": "\(mail.purchase)", "generation": .init(mail.generation),
            "attempt": .init(mail.attempt), "error": "\(report.error ?? "")",
        ]
        switch result {
        case .sent:
            logger.debug("mail.sent", metadata: metadata)
        case .retry(let atMs):
            metadata["next_attempt_ms"] = .init(atMs)
            logger.info("mail.retry", metadata: metadata)
        case .failed:
            logger.warning("mail.failed", metadata: metadata)
        }
        return MailOutcome(purchase: mail.purchase, generation: mail.generation, attempt: mail.attempt, result: result,
                           error: report.error)
    }

    /// A draw from `0..<1` for a retry's jitter.
    private func randomFraction() -> Double {
        Double(random.randomUInt64() >> 11) / Double(1 << 53)
    }
}

extension MailOutcome.Result {
    /// The same ending as the metrics count a delivery's.
    var deliveryResult: DeliveryOutcome.Result {
        switch self {
        case .sent: .delivered
        case .retry(let atMs): .retry(atMs: atMs)
        case .failed: .failed
        }
    }
}

/// A wake-up that is never lost: a `notify()` before the `wait` makes the next wait return at
/// once; many notifies before a wait count as one.
final class WakeSignal: Sendable {
    private struct State {
        var notified = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func notify() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.notified = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns on a notify, or once `clock` reads `deadlineMs` (if any).
    func wait(untilMs deadlineMs: Int64?, on clock: any ServerClock) async {
        let timer = deadlineMs.map { deadline in
            Task { [self] in
                guard (try? await clock.sleep(untilMs: deadline)) != nil else { return }
                notify()
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.notified {
                    state.notified = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
        timer?.cancel()
    }
}

/// The outbox's attempts for `/metrics`: how many, how they ended, how long they took, by kind.
final class OutboxMeter: Sendable {
    /// The kinds of attempts counted: ``OutboxTarget/kind``'s, and the redemption links' emails.
    static let kinds = ["webhook", "push", emailKind]
    static let emailKind = "email"
    /// The kinds the outbox's gauges count (emails owed are not counted yet).
    static let figureKinds = ["webhook", "push"]
    static let results = ["delivered", "retry", "failed", "gone"]

    private let counts = Mutex([UInt64](repeating: 0, count: OutboxMeter.kinds.count * OutboxMeter.results.count))
    private let durations: [DurationHistogram]

    init() {
        durations = Self.kinds.map { _ in DurationHistogram(bounds: DurationHistogram.storageBounds) }
    }

    func record(kind: String, result: DeliveryOutcome.Result, latencyMs: Int64) {
        let kindIndex = Self.kinds.firstIndex(of: kind) ?? 0
        let resultIndex: Int =
            switch result {
            case .delivered: 0
            case .retry: 1
            case .failed: 2
            case .gone: 3
            }
        counts.withLock { $0[kindIndex * Self.results.count + resultIndex] += 1 }
        durations[kindIndex].observe(nanoseconds: UInt64(max(0, latencyMs)) * 1_000_000)
    }

    func write(into text: inout PrometheusText, figures: [OutboxFigures]) {
        var samples: [(labels: PrometheusText.Labels, value: Double)] = []
        let counts = self.counts.withLock { $0 }
        for (kindIndex, kind) in Self.kinds.enumerated() {
            for (resultIndex, result) in Self.results.enumerated() {
                let count = counts[kindIndex * Self.results.count + resultIndex]
                samples.append(([("kind", kind), ("result", result)], Double(count)))
            }
        }
        text.counter("gatehouse_outbox_attempts_total", help: "Delivery attempts by kind and how they ended.", samples)
        text.histogram("gatehouse_outbox_attempt_duration_seconds", help: "How long each delivery attempt took.",
                       Self.kinds.enumerated().map { ([("kind", $0.element)], durations[$0.offset].snapshot()) })
        let totals = Self.figureKinds.map { kind in
            figures.reduce(into: OutboxFigures.Counts()) { sum, project in
                let counts = project.counts(of: kind)
                sum.pending += counts.pending
                sum.failing += counts.failing
                sum.failed += counts.failed
            }
        }
        let gauges: [(String, String, KeyPath<OutboxFigures.Counts, Int>)] = [
            ("gatehouse_outbox_pending", "Deliveries owed, not yet delivered or failed.", \.pending),
            ("gatehouse_outbox_failing", "Pending deliveries that have failed at least once.", \.failing),
            ("gatehouse_outbox_failed", "Deliveries given up on, kept for replay.", \.failed),
        ]
        for (name, help, path) in gauges {
            text.gauge(name, help: help,
                       Self.figureKinds.enumerated().map { ([("kind", $0.element)], Double(totals[$0.offset][keyPath: path])) })
        }
    }
}
