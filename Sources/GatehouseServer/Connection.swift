import GatehouseBase
import GatehouseCore
import GatehousePosix
import GatehouseRuntime
import GatehouseWire

/// One client connection, driven by its event loop: reads bytes, frames lines, hands each
/// to the dispatcher, and writes answers back in request order.
///
/// Confined to its loop's thread (see ``EventLoop``); the only way in from elsewhere is
/// `loop.execute`, which is how answers computed on other threads come back.
final class Connection: IOEventHandler, ServedConnection, @unchecked Sendable {
    let id: UInt64
    let socket: Socket
    let loop: EventLoop
    let session: Session
    private let core: ServerCore
    /// Where this connection counts its answers, on its loop (``RequestMeter``).
    private let meter: RequestMeter.Shard
    /// The answers made inline during one `processLines`, counted together at its end with one
    /// reading of the clock: runs of the same op and outcome (a pipelined batch of `sync`s is one).
    private var inlineTallies: [(tally: RequestTally, times: UInt64)] = []
    /// Called once, on the loop thread, when the connection has closed.
    var onClose: (Connection) -> Void = { _ in }
    /// Called on the loop thread when the server's buffered bytes pass their budget after this
    /// connection read or queued more (``ServerLoop`` closes connections to get back under it).
    var onOverBudget: () -> Void = {}
    private let inbox: ConnectionInbox
    /// Where this loop's project steps gather for the end of the turn.
    private let laneBatch: LaneBatch
    private let pushTarget: PushTarget
    /// Deferred requests go one of two ways: the project's lane or the inbox. Only one way is
    /// in use at a time (a single lane at that), so the connection's order holds: a request for
    /// the other way waits in `held` until what is in flight has answered.
    private var inboxInFlight = 0
    private var laneInFlight = 0
    private var laneInUse: ProjectLane?
    /// Requests (and their slots) waiting for those in flight, oldest first.
    private var held: [(slot: UInt64, request: Request, operation: Operation, receivedAt: UInt64)] = []
    private var heldHead = 0
    private var framer: LineFramer
    private var answers = SlotQueue()
    private var output = ConnectionOutput()
    /// A flush is queued for the end of this loop turn (see `complete`).
    private var flushScheduled = false
    private var interest = ConnectionInterest()
    /// No more requests will be read: the peer closed its side, a line was too long, or the
    /// server is shutting down. The connection closes once its answers are out.
    private var readingDone = false
    /// The peer has sent its end-of-file (so nothing unread is left in the kernel).
    private var peerFinished = false
    /// After the last answer (`line_too_long` among them), see ``ConnectionLinger``.
    private var linger = ConnectionLinger()
    private(set) var isClosed = false
    private(set) var lastActivityNanoseconds: UInt64
    private let acceptedNanoseconds: UInt64
    /// A `hello` has succeeded on this connection: until then its line limit is the small one,
    /// the bytes it sends are not activity, and it must say `hello` by the deadline.
    private(set) var hasSaidHello = false
    private var share = BufferedShare()
    /// What this connection counts in the server's buffered bytes (``ServerCore/bufferedBytes``).
    var bufferedBytes: Int { share.bytes }

    init(id: UInt64, socket: Socket, loop: EventLoop, laneBatch: LaneBatch, meter: RequestMeter.Shard, core: ServerCore) {
        self.id = id
        self.meter = meter
        self.socket = socket
        self.loop = loop
        self.laneBatch = laneBatch
        self.core = core
        self.framer = LineFramer(maxLineBytes: min(core.configuration.unauthenticatedLineBytesMax, core.configuration.lineBytesMax))
        // Pushes come from the log's thread; they reach this connection through its loop.
        let pushTarget = PushTarget()
        self.pushTarget = pushTarget
        self.session = Session(watches: ConnectionWatches(id: id, stats: core.stats) { [loop] line in
            loop.execute { pushTarget.connection?.push(line) }
        })
        self.inbox = ConnectionInbox(core: core)
        self.acceptedNanoseconds = core.nowNanoseconds
        self.lastActivityNanoseconds = acceptedNanoseconds
        pushTarget.connection = self
    }

    func start() throws(SystemError) {
        try interest.register(socket, on: loop, handler: self)
    }

    // MARK: Events

    func handle(_ events: IOEvents) {
        if linger.isLingering {
            if !ConnectionLinger.discardInput(socket) { close() }
            return
        }
        if events.contains(.readable) || events.contains(.hangup) || events.contains(.error) {
            readAvailable()
            // Answers made inline go out now: waiting for the socket to report writable would
            // cost two interest changes and a turn of the loop for every request.
            if output.hasPending { flush() }
        }
        if events.contains(.hangup) || events.contains(.error) {
            // Both directions are gone (or reset): nothing more can be delivered, and epoll
            // would report this on every wait until the descriptor is closed.
            close()
            return
        }
        if !isClosed, events.contains(.writable) {
            flush()
            resumeBufferedRequests()
        }
        settle()
    }

    /// Lines may wait in the framer while the connection was over its limits; once there is
    /// room again they are run without waiting for more bytes from the socket.
    private func resumeBufferedRequests() {
        guard !isClosed, !readingDone, canTakeMoreRequests, framer.bufferedByteCount > 0 else { return }
        processLines()
        flush()
    }

    private func readAvailable() {
        // A budget per wake-up keeps one busy client from starving the loop's other connections.
        var budget = 4
        while !isClosed, !readingDone, canTakeMoreRequests, budget > 0 {
            budget -= 1
            switch ConnectionRead.once(from: socket, into: { room, body in _ = framer.withUnsafeWritableTail(minimumCapacity: room, body) }) {
            case .failed(let error):
                core.logger.debug("conn.read_failed", metadata: ["conn": "\(id)", "error": "\(error)"])
                close()
                return
            case .wouldBlock:
                return
            case .endOfFile:
                readingDone = true
                peerFinished = true
                processLines()
                return
            case .bytes(let drained):
                // Bytes before a `hello` are not activity: a client that trickles them is still
                // closed by its deadline.
                if hasSaidHello { lastActivityNanoseconds = core.nowNanoseconds }
                processLines()
                if !isClosed, accountBuffered() { onOverBudget() }
                if drained { return }
            }
        }
    }

    /// Backpressure: past these limits the connection stops reading, so a client that sends
    /// and never reads makes the kernel's buffers fill and its own writes block.
    private var canTakeMoreRequests: Bool {
        answers.count < core.configuration.inFlightRequestsMax
            && output.pending < core.configuration.outputBytesHighWater
    }

    private func processLines() {
        // The lines of one read arrived together: their latency counts from one reading of the
        // clock, and the answers made here until one more.
        let receivedAt = EventLoop.monotonicNanoseconds()
        defer { countInlineAnswers(since: receivedAt) }
        while !isClosed, canTakeMoreRequests {
            switch framer.next() {
            case .needMoreData:
                return
            case .lineTooLong:
                let limit = framer.maxLineBytes
                let error = GatehouseError(.lineTooLong, "a request line may be at most \(limit) bytes", details: [.limit(limit)])
                answer(Answer.failure(id: .null, error), .other(.lineTooLong))
                readingDone = true
                return
            case .line(let range):
                core.stats.requestReceived()
                if heldHead == held.count, inboxInFlight == 0,
                    let quick = framer.withLine(range, { line in core.quickStep(line, session: session) }),
                    laneInFlight == 0 || laneInUse === quick.lane
                {
                    let job = LaneJob(
                        connection: self, slot: answers.reserve(), requestID: quick.id, principal: quick.principal, step: quick.step,
                        op: CurrencyOperations.transactNumber, receivedAt: receivedAt
                    )
                    handOver(job, to: quick.lane)
                    continue
                }
                let outcome = framer.withLine(range) { line in
                    core.handleLine(line, session: session, canRunInline: answers.isEmpty)
                }
                if !hasSaidHello { noteHello() }
                switch outcome {
                case .answer(let bytes, let tally):
                    answer(bytes, tally)
                case .deferred(let request, let operation):
                    let slot = answers.reserve()
                    if heldHead < held.count || !dispatch(request, operation, slot: slot, receivedAt: receivedAt) {
                        held.append((slot, request, operation, receivedAt))
                    }
                }
            }
        }
    }

    private func countInlineAnswers(since receivedAt: UInt64) {
        guard !inlineTallies.isEmpty else { return }
        let elapsed = EventLoop.monotonicNanoseconds() &- receivedAt
        for run in inlineTallies { meter.record(.line, run.tally, elapsed: elapsed, times: run.times) }
        inlineTallies.removeAll(keepingCapacity: true)
    }

    /// Once a `hello` has succeeded (inline, or on the inbox), the connection gets the server's
    /// line limit and its reads count as activity; its deadline to say `hello` is over.
    private func noteHello() {
        guard session.current != nil else { return }
        hasSaidHello = true
        framer.maxLineBytes = core.configuration.lineBytesMax
        lastActivityNanoseconds = core.nowNanoseconds
    }

    /// Brings this connection's share of the server's buffered bytes up to date: input read but
    /// not yet framed, and answers not yet sent. Answers whether the server is over its budget.
    private func accountBuffered() -> Bool {
        share.update(to: isClosed ? 0 : framer.bufferedByteCount + output.pending, core: core)
    }

    /// Input buffered before the first successful `hello`: what the budget sheds first.
    var unauthenticatedBytes: Int { hasSaidHello ? 0 : bufferedBytes }

    /// Hands a deferred request on, or answers `false` when it must wait for what is in flight.
    ///
    /// While the inbox has requests, more follow them there: the inbox runs them in order, and
    /// one of them may change the session (`hello`). Otherwise the session is settled and the
    /// request can be routed: a project step joins the lane already in use (or any, with
    /// nothing in flight); a request for the inbox waits for the lane's answers.
    private func dispatch(_ request: Request, _ operation: Operation, slot: UInt64, receivedAt: UInt64) -> Bool {
        if inboxInFlight > 0 {
            submitToInbox(request, operation, slot: slot, receivedAt: receivedAt)
            return true
        }
        switch core.route(request, operation, session: session) {
        case .answer(let bytes, let code):
            meter.record(.line, RequestTally(op: operation.number, code: code), since: receivedAt)
            answers.fill(slot, with: bytes)
            answers.drainReady(into: &output.bytes)
        case .lane(let lane, let principal, let step):
            guard laneInFlight == 0 || laneInUse === lane else { return false }
            let job = LaneJob(
                connection: self, slot: slot, requestID: request.id, principal: principal, step: step, op: operation.number,
                receivedAt: receivedAt
            )
            handOver(job, to: lane)
        case .inbox:
            guard laneInFlight == 0 else { return false }
            submitToInbox(request, operation, slot: slot, receivedAt: receivedAt)
        }
        return true
    }

    private func handOver(_ job: LaneJob, to lane: ProjectLane) {
        laneInFlight += 1
        laneInUse = lane
        laneBatch.add(job, to: lane)
    }

    private func submitToInbox(_ request: Request, _ operation: Operation, slot: UInt64, receivedAt: UInt64) {
        inboxInFlight += 1
        let op = operation.number
        inbox.submit(request, session: session) { [self] outcome in
            loop.execute {
                self.inboxInFlight -= 1
                self.meter.record(.line, RequestTally(op: op, code: outcome.code), since: receivedAt)
                self.complete(slot, with: outcome.answer)
            }
        }
    }

    /// What waited for the requests in flight goes on, in order, as far as it can.
    private func dispatchHeld() {
        while heldHead < held.count {
            let next = held[heldHead]
            guard dispatch(next.request, next.operation, slot: next.slot, receivedAt: next.receivedAt) else { return }
            heldHead += 1
        }
        held.removeAll(keepingCapacity: true)
        heldHead = 0
    }

    /// A project step's outcome arrives (on the loop's thread). `writingNow`: the answers ready
    /// are written at once rather than at the end of the turn.
    func finish(_ outcome: LaneOutcome, writingNow: Bool, now: UInt64) {
        laneInFlight -= 1
        if laneInFlight == 0 { laneInUse = nil }
        meter.record(.line, outcome.tally, elapsed: now &- outcome.receivedAt)
        complete(outcome.slot) { out in
            switch outcome.result {
            case .success(let reply): Answer.appendSuccess(id: outcome.requestID, reply.result, to: &out)
            case .failure(let error): Answer.appendFailure(id: outcome.requestID, error, to: &out)
            }
        }
        if writingNow { flush() }
    }

    private func answer(_ bytes: [UInt8], _ tally: RequestTally) {
        if let last = inlineTallies.indices.last, inlineTallies[last].tally == tally {
            inlineTallies[last].times += 1
        } else {
            inlineTallies.append((tally, 1))
        }
        if answers.isEmpty {
            output.bytes.append(contentsOf: bytes)
        } else {
            answers.append(bytes)
        }
    }

    /// A push (`watch`) arrives (on the loop's thread): it goes out after the whole lines already
    /// queued, between answers; a connection too far behind is dropped by `settle`.
    func push(_ line: [UInt8]) {
        guard !isClosed else { return }
        // A watch lives as long as the key it was made with: rotated, or a project deleted, ends it.
        guard session.current?.isCurrent == true else {
            session.watches?.releaseAll()
            return
        }
        output.bytes.append(contentsOf: line)
        flush()
        settle()
    }

    /// An answer computed elsewhere arrives (on the loop's thread). Answers of one group commit
    /// arrive together, as tasks of the same loop turn: they are gathered and written with one
    /// send at the end of the turn, not one send each (a pipelined client's writes share it).
    private func complete(_ slot: UInt64, with bytes: [UInt8]) {
        complete(slot) { $0.append(contentsOf: bytes) }
    }

    /// ``complete(_:with:)`` for an answer still to be written out: the answer next in order is
    /// written straight into the output, the others into a buffer of their own to wait their turn.
    private func complete(_ slot: UInt64, writing answer: (inout [UInt8]) -> Void) {
        guard !isClosed else { return }
        if slot == answers.firstSlot {
            answer(&output.bytes)
            answers.releaseFirst()
        } else {
            var bytes: [UInt8] = []
            answer(&bytes)
            answers.fill(slot, with: bytes)
        }
        answers.drainReady(into: &output.bytes)
        if heldHead < held.count { dispatchHeld() }
        guard !flushScheduled else { return }
        flushScheduled = true
        loop.atEndOfTurn { [self] in
            flushScheduled = false
            guard !isClosed else { return }
            flush()
            resumeBufferedRequests()
            settle()
        }
    }

    // MARK: Writing

    private func flush() {
        guard !isClosed else { return }
        do {
            try output.write(to: socket)
        } catch {
            core.logger.debug("conn.write_failed", metadata: ["conn": "\(id)", "error": "\(error)"])
            close()
        }
    }

    /// Decides what to wait for next, and closes a connection that has nothing left to do.
    private func settle() {
        guard !isClosed else { return }
        if accountBuffered() {
            onOverBudget()
            guard !isClosed else { return }
        }
        let pendingOutput = output.hasPending
        if readingDone, answers.isEmpty, !pendingOutput {
            if peerFinished {
                close()
                return
            }
            if !linger.start(socket: socket, loop: loop, interest: &interest, now: core.nowNanoseconds) { close() }
            return
        }
        if pendingOutput, output.pending > core.configuration.outputBytesMax {
            core.logger.info("conn.dropped_slow_reader", metadata: ["conn": "\(id)"])
            close()
            return
        }
        interest.set(reading: !readingDone && canTakeMoreRequests, writing: pendingOutput, socket, on: loop)
    }

    // MARK: Lifecycle

    /// Stops reading requests; answers what is in flight, then closes (SIGTERM).
    func beginShutdown() {
        guard !isClosed else { return }
        // Requests already received are in flight: they are answered. Nothing more is read.
        if !readingDone { processLines() }
        readingDone = true
        flush()
        settle()
    }

    /// The loop's periodic pass: closes a connection whose linger is over, one that has not said
    /// `hello` by its deadline, and one idle past the limit with nothing in flight.
    func housekeep(now: UInt64, _ deadlines: ConnectionDeadlines) {
        if linger.isOver(now: now) {
            close()
            return
        }
        if !hasSaidHello, !isClosed {
            noteHello()
            if !hasSaidHello, now &- acceptedNanoseconds > deadlines.hello {
                core.logger.debug("conn.hello_timeout", metadata: ["conn": "\(id)"])
                close()
                return
            }
        }
        guard let limitNanoseconds = deadlines.idle, !isClosed, answers.isEmpty, !output.hasPending,
            now &- lastActivityNanoseconds > limitNanoseconds, session.watches?.isEmpty ?? true
        else { return }
        core.logger.debug("conn.idle_closed", metadata: ["conn": "\(id)"])
        close()
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        loop.unregister(socket.descriptor)
        socket.close()
        _ = share.update(to: 0, core: core)
        output.discard()
        session.watches?.releaseAll()
        pushTarget.connection = nil
        onClose(self)
    }
}

/// The connection as pushes see it, until it closes.
///
/// A strong reference that `close()` clears, not a weak one: a weak reference gives the
/// connection a side table, and every retain and release of it (each lane step and answer
/// carries one) would then take the runtime's slow path.
private final class PushTarget: @unchecked Sendable {
    // Set in init, before any push can arrive; cleared by close() and read by pushes, both on
    // the connection's loop thread.
    var connection: Connection?
}
