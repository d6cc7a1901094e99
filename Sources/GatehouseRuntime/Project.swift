import GatehouseBase
public import GatehouseCore
public import GatehouseStorage
import Synchronization

/// What every project needs from the server around it.
struct ProjectContext: Sendable {
    let log: WriteAheadLog
    let trigger: SnapshotTrigger
    let clock: any ServerClock
    let random: any RandomSource
    let retention: Retention
    let outboxHook: OutboxHook
}

/// A value whose answer may go out once the log is durable up to `lsn`.
public struct Committed<Value: Sendable>: Sendable {
    public var value: Value
    public var lsn: LSN

    public init(_ value: Value, lsn: LSN) {
        self.value = value
        self.lsn = lsn
    }
}

/// One project (tenant): an actor that owns the project's state. A change is validated, logged
/// and applied inside it with no suspension in between, so concurrent requests cannot
/// interleave halfway through a rule and the log's order is the order changes were applied.
/// Answers wait for durability outside the actor (`Committed.lsn`).
public actor Project {
    public nonisolated let id: ProjectID
    nonisolated let incarnation: Incarnation
    /// The log position where this project's state began (its create or restore record, or
    /// the snapshot it was loaded from): the log must reach back to here until a snapshot exists.
    nonisolated let originLSN: LSN
    /// What other threads may read without entering the actor.
    public nonisolated let published: PublishedProjectState
    /// Profiles' cursors for `sync`'s answer on a connection's own thread.
    public nonisolated let syncBoard: SyncBoard
    /// Connections watching this project's profiles.
    public nonisolated let watchHub = WatchHub()
    /// The redemption tokens and `web` config the buyer's pages find the project by.
    public nonisolated let publishedWeb: PublishedWeb
    private let context: ProjectContext
    private var state: ProjectState
    /// The log position of the last change applied here, durable or not yet.
    private var lastLSN: LSN
    /// Payload bytes logged since the last snapshot of this project.
    private(set) var loggedBytesSinceSnapshot = 0
    /// Logged bytes at which the project asks for its next snapshot (``SnapshotTrigger``).
    private(set) var snapshotDueBytes: Int
    /// Set while a `tenant.restore` replaces this project: changes are refused, so the restored
    /// state's sequence can be placed after everything this one ever answered.
    private var frozen = false
    /// Set when the server closes: no expiry timer is armed again.
    private var timerStopped = false
    /// Inside ``perform(_:)``: appends leave the log's flusher asleep until the body is done.
    private var holdingFlusher = false
    /// The one timer of the project: it wakes at the earliest expiry (DESIGN.md: time moves too).
    private var expiryTimer: Task<Void, Never>?
    private var expiryTimerDeadlineMs: Int64?
    /// The changes the log may not have made durable yet, for answers that wait for the newest
    /// one they show.
    private var recent = RecentChanges()
    /// The public key's profile creations (``ProjectLimits``). Runtime state: neither logged nor
    /// in snapshots, so a start begins with a full bucket.
    var sdkCreates = TokenBucket()
    /// Which pending deliveries are due when, and which are in flight (``OutboxQueue``).
    var outboxQueue: OutboxQueue
    /// Which owed emails of redemption links are due when, and which are in flight (``MailQueue``).
    var mailQueue: MailQueue
    /// The deliverer's wake-up, once it listens (``listenForDeliveries(_:)``).
    var outboxListener: (@Sendable () -> Void)?
    /// Inside ``perform(_:)``: a change owed deliveries, and the deliverer is woken once the
    /// last change of the visit is durable (one wake for the visit, not one per write).
    private var outboxWakeWanted = false

    /// `snapshotBodyBytes`: the body of the snapshot `state` was loaded from, if any, which sets
    /// when the project is next snapshotted (``snapshotWritten(bodyBytes:)``).
    init(state: ProjectState, incarnation: Incarnation, originLSN: LSN, lastLSN: LSN, context: ProjectContext,
         snapshotBodyBytes: Int = 0)
    {
        self.id = state.id
        self.incarnation = incarnation
        self.state = state
        // Created, loaded or restored: the project keeps what the server's limits say.
        self.state.retention = context.retention
        self.lastLSN = lastLSN
        self.originLSN = originLSN
        self.context = context
        self.snapshotDueBytes = context.trigger.dueBytes(afterSnapshotBody: snapshotBodyBytes)
        self.published = PublishedProjectState(state: state)
        self.publishedWeb = PublishedWeb(state: state)
        self.syncBoard = SyncBoard(configCursor: state.configCursor)
        self.outboxQueue = OutboxQueue(state.outbox)
        self.mailQueue = MailQueue(state.web)
    }

    var log: WriteAheadLog { context.log }
    var outboxHook: OutboxHook { context.outboxHook }
    /// Lends the state to `body` to read, without copying it: a struct stored in a class and
    /// read as a value is copied (a retain of every buffer it holds, and a release after), which
    /// every request paid. `body` must not call back into the project. (A throwing closure names
    /// its error type, `{ state throws(GatehouseError) in … }`: closures do not infer it.)
    func reading<T>(_ body: (borrowing ProjectState) throws(GatehouseError) -> T) throws(GatehouseError) -> T {
        try Self.lend(&state, to: body)
    }

    /// Like ``reading(_:)`` for a body that cannot fail.
    func peek<T>(_ body: (borrowing ProjectState) -> T) -> T {
        Self.lend(&state, to: body)
    }

    private static func lend<T>(_ state: inout ProjectState, to body: (borrowing ProjectState) throws(GatehouseError) -> T)
        throws(GatehouseError) -> T
    {
        try body(state)
    }

    private static func lend<T>(_ state: inout ProjectState, to body: (borrowing ProjectState) -> T) -> T {
        body(state)
    }

    /// Lends the outbox's schedule to change and the state to read, side by side.
    func withOutboxQueue<T>(_ body: (inout OutboxQueue, borrowing ProjectState) -> T) -> T {
        Self.lend(&outboxQueue, &state, to: body)
    }

    /// Lends the emails' schedule to change and the state to read, side by side.
    func withMailQueue<T>(_ body: (inout MailQueue, borrowing ProjectState) -> T) -> T {
        Self.lend(&mailQueue, &state, to: body)
    }

    private static func lend<Queue, T>(_ queue: inout Queue, _ state: inout ProjectState,
                                       to body: (inout Queue, borrowing ProjectState) -> T) -> T
    {
        body(&queue, state)
    }
    /// The position of the project's last change, durable or not: what an answer that may reflect
    /// any of the project's state waits for (an error, an answer that changed nothing).
    public var lastCommittedLSN: LSN { lastLSN }

    /// The position of the newest change a document of `profile` shows: its own last change, or
    /// the config's (which the document is read against), whichever is newer; 0 when both are
    /// durable. A read of one profile does not wait for the changes of others.
    func lsnShowing(_ profile: ProfileID) -> LSN {
        recent.prune(durableUpTo: log.durableLSN)
        return max(recent.lsn(reflecting: profile), recent.configLSN)
    }

    /// The position of the change numbered `sequence` (a feed event's cursor), 0 if durable.
    func lsnShowing(sequence: UInt64) -> LSN {
        recent.prune(durableUpTo: log.durableLSN)
        return recent.lsn(reflectingSequence: sequence)
    }

    /// The position of the newest config change (`config.get`, `offerings`).
    var configLSN: LSN { recent.configLSN }

    /// Runs `body` inside the actor, in one visit: the way to run many requests' steps for the
    /// price of one hop. The changes `body` logs start their write together when it returns,
    /// so they share a sync (an append alone would wake the flusher, which would start a write
    /// with only the first of them).
    public func perform<T: Sendable>(_ body: @Sendable (isolated Project) -> T) -> T {
        holdingFlusher = true
        let lastBefore = lastLSN
        defer {
            holdingFlusher = false
            if lastLSN != lastBefore { log.wakeFlusher() }
            if outboxWakeWanted, let listener = outboxListener {
                outboxWakeWanted = false
                log.whenDurable(lastLSN, listener)
            }
        }
        return body(self)
    }
    var nowMs: Int64 { context.clock.nowMs() }

    /// Wakes the deliverer once `lsn` is durable (at the end of the visit inside ``perform(_:)``).
    func wakeDeliverer(afterDurable lsn: LSN, _ listener: @escaping @Sendable () -> Void) {
        if holdingFlusher {
            outboxWakeWanted = true
        } else {
            log.whenDurable(lsn, listener)
        }
    }
    var random: any RandomSource { context.random }

    public func summary() -> Committed<ProjectSummary> {
        Committed(ProjectSummary(id: state.id, name: state.name, createdMs: state.createdMs, profiles: state.profiles.count,
                                 cursor: state.sequence),
                  lsn: lastLSN)
    }

    /// How much the project holds of the tables its ``Retention`` bounds.
    public struct HeldCounts: Sendable, Equatable, CustomStringConvertible {
        public var events: Int
        public var keys: Int
        public var entries: Int

        public var description: String { "\(events) events, \(keys) idempotency keys, \(entries) history entries" }
    }

    public func heldCounts() -> HeldCounts {
        peek { state in
            HeldCounts(events: state.events.count, keys: state.currencies.idempotencyCount,
                       entries: state.currencies.historyEntryCount)
        }
    }

    public func config() -> Committed<ProjectConfig> {
        Committed(peek { $0.config }, lsn: configLSN)
    }

    /// Replaces the configuration as a whole; an invalid one changes nothing.
    public func putConfig(_ config: ProjectConfig) throws(GatehouseError) -> Committed<ProjectConfig> {
        let lsn = try commit(try state.replaceConfig(with: config, random: context.random))
        return Committed(state.config, lsn: lsn)
    }

    /// Replaces one key; the old one stops working at once, also on open connections.
    func rotateKey(_ kind: KeyKind, random: some RandomSource) throws(GatehouseError) -> Committed<String> {
        let key = KeyFormat.make(kind, project: id, random: random)
        let lsn = try commit(.keyRotated(kind, SecretDigest(secret: key)))
        return Committed(key, lsn: lsn)
    }

    /// The state as it is now and the log position it reflects, for a snapshot. A copy of a
    /// value: later changes do not touch it.
    func capture() -> (state: ProjectState, lsn: LSN) {
        loggedBytesSinceSnapshot = 0
        return (state, lastLSN)
    }

    /// A snapshot of this project was written with a body of `bodyBytes`: the next is due once
    /// the project has logged half as much (or the trigger's floor).
    func snapshotWritten(bodyBytes: Int) {
        snapshotDueBytes = context.trigger.dueBytes(afterSnapshotBody: bodyBytes)
    }

    /// Like ``capture()``, for an export, which does not replace the project's own snapshots.
    func captureForExport() -> (state: ProjectState, lsn: LSN) {
        (state, lastLSN)
    }

    /// Stops taking changes and answers the last sequence number handed out.
    func freeze() -> UInt64 {
        frozen = true
        return state.sequence
    }

    func unfreeze() {
        frozen = false
        armExpiryTimer()
    }

    // MARK: Time

    /// Applies what the passing of time has ended by now (subscriptions past expiry or grace,
    /// grants past their end) as one logged batch, then arms the timer for the next deadline.
    /// Runs at start-up (what fell due while the server was down), when the timer fires, and
    /// after `clock.advance`. Answers the log position that covers it.
    @discardableResult
    public func runExpiries() -> LSN {
        expiryTimer?.cancel()
        expiryTimer = nil
        expiryTimerDeadlineMs = nil
        guard !published.isDeleted, !frozen, !timerStopped else { return lastLSN }
        for batch in state.expiryBatches(nowMs: nowMs) {
            do throws(GatehouseError) {
                _ = try commit(batch)
            } catch {
                // The log refuses writes for now (disk full): try again shortly.
                retryExpiries(afterMs: 1000)
                return lastLSN
            }
        }
        armExpiryTimer()
        return lastLSN
    }

    /// Arms the timer for the next deadline unless it is armed for it already. The timer sleeps
    /// on the project's clock, so a test clock's move wakes it as the passing of time does.
    private func armExpiryTimer() {
        // Read through `peek`: `state.purchases` read off the stored state copies the whole book.
        armExpiryTimer(next: peek { $0.purchases.nextDeadlineMs })
    }

    /// ``armExpiryTimer()`` for a caller that has read the next deadline already.
    private func armExpiryTimer(next: Int64?) {
        guard !published.isDeleted, !frozen, !timerStopped, let next else {
            expiryTimer?.cancel()
            expiryTimer = nil
            expiryTimerDeadlineMs = nil
            return
        }
        guard expiryTimerDeadlineMs != next else { return }
        runExpiries(atMs: next)
        expiryTimerDeadlineMs = next
    }

    /// The server is closing: the timer stops, and none is armed again.
    func stopExpiryTimer() {
        timerStopped = true
        expiryTimer?.cancel()
        expiryTimer = nil
        expiryTimerDeadlineMs = nil
    }

    private func retryExpiries(afterMs delayMs: Int64) {
        runExpiries(atMs: nowMs + delayMs)
    }

    /// The timer: a task that sleeps on the clock until `deadlineMs`, then runs the expiries.
    private func runExpiries(atMs deadlineMs: Int64) {
        expiryTimer?.cancel()
        expiryTimerDeadlineMs = nil
        let clock = context.clock
        expiryTimer = Task { [weak self] in
            do {
                try await clock.sleep(untilMs: deadlineMs)
            } catch {
                return
            }
            await self?.runExpiries()
        }
    }

    private func commit(_ change: ProjectState.Change) throws(GatehouseError) -> LSN {
        try commit(ProjectState.ChangeBatch([change], atMs: context.clock.nowMs()))
    }

    /// Log first, then apply: nothing is in memory that is not in the log, and a change the
    /// log refuses (disk full) leaves no trace.
    func commit(_ batch: ProjectState.ChangeBatch) throws(GatehouseError) -> LSN {
        let lsn = try commit(logging: { RuntimeRecord.projectChanged(incarnation, batch).logRecord }, applying: { $0.apply(batch) })
        publishWeb(after: batch)
        return lsn
    }

    /// ``commit(_:)-(ChangeBatch)`` of a `currency.transact`'s batch, logged and applied from its
    /// fields (``ProjectState/TransactChange``): the same record, the same state.
    func commit(_ transact: ProjectState.TransactChange) throws(GatehouseError) -> LSN {
        try commit(logging: { RuntimeRecord.projectChanged(incarnation, transact) }, applying: { $0.apply(transact) })
    }

    /// Logs the record `logging` makes, then applies the same change with `applying`.
    private func commit(logging record: () -> WALRecord, applying apply: (inout ProjectState) -> ProjectState.BatchEffects)
        throws(GatehouseError) -> LSN
    {
        guard !frozen else { throw GatehouseError(.overloaded, "the project is being restored; retry shortly") }
        let record = record()
        let lsn = try log.appendMappingErrors(record, wakingFlusher: !holdingFlusher)
        let effects = apply(&state)
        lastLSN = lsn
        // The readers outside the actor learn what changed; the watchers' pushes are made. The
        // next deadline is read in the same visit of the state (each is a run-time exclusivity
        // check of the stored property, about 120 instructions).
        let (pushes, nextDeadlineMs, sequence, outboxIdle) = peek { state in
            if effects.keysChanged { published.update(from: state) }
            published.noteProfileCount(state.profiles.count)
            syncBoard.publish(effects, from: state)
            return (watchHub.pushes(for: effects, in: state), state.purchases.nextDeadlineMs, state.sequence, state.outbox.isIdle)
        }
        noteOutbox(effects, lsn: lsn, outboxIdle: outboxIdle)
        recent.note(lsn: lsn, sequence: sequence, effects: effects) { log.durableLSN }
        if !pushes.isEmpty {
            log.whenDurable(lsn) {
                for (target, line) in pushes { target.push(line) }
            }
        }
        loggedBytesSinceSnapshot += record.payload.count
        if loggedBytesSinceSnapshot >= snapshotDueBytes {
            loggedBytesSinceSnapshot = 0
            context.trigger.request(self)
        }
        armExpiryTimer(next: nextDeadlineMs)
        return lsn
    }
}

extension WriteAheadLog {
    /// Appends, turning storage refusals into the errors clients see.
    func appendMappingErrors(_ record: WALRecord, wakingFlusher: Bool = true) throws(GatehouseError) -> LSN {
        do throws(StorageError) {
            return try append(record, wakingFlusher: wakingFlusher)
        } catch {
            throw error.clientError
        }
    }
}

extension StorageError {
    /// What a client is told when the log refuses a write.
    var clientError: GatehouseError {
        switch code {
        case .readOnly: GatehouseError(.readOnly, "the disk is (nearly) full: writes are refused until space is freed; reads still work")
        case .busy: GatehouseError(.overloaded, "the log is behind; retry shortly")
        default: GatehouseError(.internal, "the log refused the write: \(message)")
        }
    }
}

/// A project's facts that connections read on their own threads: the key digests for `hello`,
/// the key generations every request is checked against, whether the project still exists, and
/// (for `/metrics`) how many profiles it has.
public final class PublishedProjectState: Sendable {
    private let keys: Mutex<KeyDigests>
    private let publicGeneration: Atomic<UInt64>
    private let secretGeneration: Atomic<UInt64>
    private let deleted = Atomic<Bool>(false)
    private let profiles: Atomic<Int>
    private let outbox = Mutex(OutboxFigures())

    init(state: ProjectState) {
        self.keys = Mutex(state.keys)
        self.publicGeneration = Atomic(state.keyGenerations[.public] ?? 1)
        self.secretGeneration = Atomic(state.keyGenerations[.secret] ?? 1)
        self.profiles = Atomic(state.profiles.count)
    }

    /// The project's profiles as of its last applied change (aliases merged away not counted).
    public var profileCount: Int { profiles.load(ordering: .relaxed) }

    /// Called by the actor after every change, the only writer: most changes leave the count
    /// alone, and then the cache line readers share is not written.
    func noteProfileCount(_ count: Int) {
        if profiles.load(ordering: .relaxed) != count { profiles.store(count, ordering: .relaxed) }
    }

    /// The outbox's counts as of the project's last applied change.
    public var outboxFigures: OutboxFigures { outbox.withLock { $0 } }

    func noteOutbox(_ figures: OutboxFigures) {
        outbox.withLock { if $0 != figures { $0 = figures } }
    }

    func update(from state: ProjectState) {
        keys.withLock { $0 = state.keys }
        publicGeneration.store(state.keyGenerations[.public] ?? 1, ordering: .releasing)
        secretGeneration.store(state.keyGenerations[.secret] ?? 1, ordering: .releasing)
    }

    func markDeleted() {
        deleted.store(true, ordering: .releasing)
    }

    public var isDeleted: Bool { deleted.load(ordering: .acquiring) }

    public func generation(of kind: KeyKind) -> UInt64 {
        switch kind {
        case .public: publicGeneration.load(ordering: .acquiring)
        case .secret: secretGeneration.load(ordering: .acquiring)
        }
    }

    /// Whether `key` is the project's current key of `kind` (a constant-time comparison of digests).
    func matches(_ key: String, kind: KeyKind) -> Bool {
        let digest = keys.withLock { $0[kind] }
        return digest.matches(key)
    }
}

/// What `project.list` and `project.get` show of a project.
public struct ProjectSummary: Sendable, Equatable {
    public var id: ProjectID
    public var name: String
    public var createdMs: Int64
    public var profiles: Int
    public var cursor: UInt64
}
