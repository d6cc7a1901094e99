import GatehouseBase
import GatehousePosix
#if canImport(Glibc)
import Glibc
#endif

/// A load connection as the coordinator drives it, whichever its wire.
protocol LoadDriver: AnyObject, Sendable {
    var loop: EventLoop { get }
    func start()
    func finish()
}

/// One connection's closed loop, as in `bench/lineload.c`: `pipeline` requests are kept in
/// flight, and every answer read sends the next request. Answers come back in request order
/// (PROTOCOL.md; HTTP/1.1 pipelining on the HTTP listener), so the oldest send time in the
/// ring belongs to the next answer. `Requests` writes them and `Answers` frames what comes
/// back, lines or HTTP (``LoadRequestWriter``, ``LoadAnswerReader``): generic rather than
/// dynamic, so the line's hot path is specialised and pays nothing for HTTP's existence.
///
/// It runs on a generator ``EventLoop`` (epoll, level-triggered, non-blocking socket), many
/// connections per thread as lineload does: a thread per connection would spend the shared
/// cores on context switches that the server then lacks. Buffers are allocated before the
/// clock starts, so the hot path of the line takes no lock and allocates nothing (except for
/// the rare read buffer growth when an answer is longer than any before); HTTP's parser
/// allocates each answer's headers and body.
///
/// `@unchecked Sendable` for the same reason as the server's connections: it is created on the
/// coordinating thread and handed to its loop once, from then on touched only on that loop's
/// thread, and read again by the coordinator only after the loop's thread has been joined.
final class LoadConnection<Requests: LoadRequestWriter, Answers: LoadAnswerReader>: IOEventHandler, LoadDriver,
    @unchecked Sendable
{
    let loop: EventLoop
    private let descriptor: Int32
    private let requests: Requests
    private var answers: Answers
    private let pipeline: Int
    private let timeline: LoadTimeline
    /// `{n}` values are `index + k * connections`: unique across the run without a shared counter.
    private var nextCounter: Int
    private let counterStride: Int

    /// Room for `pipeline` requests: bytes the kernel has not taken yet all belong to requests
    /// in flight, and at most `pipeline` are.
    private let writeBuffer: UnsafeMutableRawBufferPointer
    private var writeCount = 0
    private var waitingForWritable = false
    /// Send times of the requests in flight, oldest at `oldest`.
    private let sentAt: UnsafeMutableBufferPointer<UInt64>
    private var oldest = 0
    private var inFlight = 0
    /// The newest requests in flight that are queued but not yet written; they get their send
    /// time when the write happens, not when they are formatted.
    private var unsent = 0
    private var isRegistered = false
    private let tally: LoadTally

    init(loop: EventLoop, tally: LoadTally, descriptor: Int32, requests: Requests, answers: Answers, pipeline: Int,
         index: Int, connections: Int, timeline: LoadTimeline)
    {
        self.loop = loop
        self.tally = tally
        self.descriptor = descriptor
        self.requests = requests
        self.answers = answers
        self.pipeline = pipeline
        self.timeline = timeline
        self.nextCounter = index
        self.counterStride = connections
        writeBuffer = .allocate(byteCount: pipeline * requests.requestBytesMax, alignment: 8)
        sentAt = .allocate(capacity: pipeline)
        sentAt.initialize(repeating: 0)
    }

    deinit {
        answers.deallocate()
        writeBuffer.deallocate()
        sentAt.deallocate()
    }

    // MARK: Lifecycle (loop thread)

    /// Registers with the loop and sends the first `pipeline` requests in one write.
    func start() {
        do {
            try loop.register(descriptor, interest: .readable, handler: self)
        } catch {
            return fail("cannot watch a load connection: \(error)")
        }
        isRegistered = true
        for _ in 0..<pipeline { queueRequest() }
        flush()
    }

    /// The coordinator's stop at the end of the run, for connections still waiting for an
    /// answer (the others stopped at their first answer after the end): counts the requests
    /// the server has left unanswered for too long, then stops.
    func finish() {
        guard isRegistered else { return }
        let now = LoadTimeline.now()
        var slot = oldest
        for _ in 0..<inFlight {
            if now > sentAt[slot], now - sentAt[slot] > LoadCounts.stallNanoseconds { tally.counts.stalledRequests += 1 }
            slot = slot + 1 == pipeline ? 0 : slot + 1
        }
        stop()
    }

    /// Stops watching the socket; the coordinator closes it once every loop has stopped.
    func stop() {
        guard isRegistered else { return }
        isRegistered = false
        loop.unregister(descriptor)
    }

    private func fail(_ message: String) {
        if tally.counts.failure == nil { tally.counts.failure = message }
        stop()
    }

    func handle(_ events: IOEvents) {
        if events.contains(.writable) { flush() }
        guard isRegistered, !events.isDisjoint(with: [.readable, .hangup, .error]) else { return }
        guard receive() else { return }
        // One clock read per read(2): every answer in this batch arrived at this moment.
        let now = LoadTimeline.now()
        guard now < timeline.endNanoseconds else { return stop() }
        takeAnswers(at: now)
        flush()
    }

    // MARK: Reading

    /// False when there was nothing to take.
    private func receive() -> Bool {
        switch answers.receive(from: descriptor) {
        case .received:
            return true
        case .nothing:
            return false
        case .failed(let message):
            fail(message)
            return false
        }
    }

    private func takeAnswers(at now: UInt64) {
        do {
            while isRegistered, let answer = try answers.next() {
                take(answer, at: now)
            }
        } catch {
            fail(error.message)
        }
        answers.discardTaken()
    }

    @inline(__always)
    private func take(_ answer: Answers.Answer, at now: UInt64) {
        guard inFlight > 0 else {
            return fail("an answer arrived that answers no request: \(answer.text)")
        }
        let sent = sentAt[oldest]
        oldest = oldest + 1 == pipeline ? 0 : oldest + 1
        inFlight -= 1
        let failed = answer.isError
        if now >= timeline.measureFromNanoseconds {
            tally.counts.latencies.record(nanoseconds: now > sent ? now - sent : 0)
            tally.counts.requests += 1
            if failed { tally.counts.errors += 1 }
        } else if failed {
            tally.counts.warmupErrors += 1
        }
        if failed, tally.counts.firstErrorAnswer == nil {
            tally.counts.firstErrorAnswer = answer.text
        }
        queueRequest()
    }

    // MARK: Writing

    private func queueRequest() {
        writeCount += requests.write(counter: nextCounter, to: writeBuffer.baseAddress! + writeCount)
        nextCounter += counterStride
        inFlight += 1
        unsent += 1
    }

    /// Writes every queued request in one send(2) when the kernel takes them all. When it does
    /// not, the rest waits for a writable event instead of spinning: a spinning client stops
    /// reading, and a server blocked on writing to it then stops reading too.
    private func flush() {
        guard isRegistered, writeCount > 0 else { return }
        if unsent > 0 { stampUnsent() }
        var written = 0
        while written < writeCount {
            let count = send(descriptor, writeBuffer.baseAddress! + written, writeCount - written, Int32(MSG_NOSIGNAL))
            if count >= 0 {
                written += count
                continue
            }
            let code = errno
            if code == EINTR { continue }
            guard code == EAGAIN || code == EWOULDBLOCK else {
                return fail("sending requests failed: \(SystemError("send", errno: code))")
            }
            break
        }
        writeCount -= written
        if writeCount > 0, written > 0 {
            memmove(writeBuffer.baseAddress!, writeBuffer.baseAddress! + written, writeCount)
        }
        let mustWait = writeCount > 0
        if mustWait != waitingForWritable {
            waitingForWritable = mustWait
            loop.setInterest(descriptor, mustWait ? [.readable, .writable] : .readable)
        }
    }

    /// The newest `unsent` requests in the ring go out now.
    private func stampUnsent() {
        let now = LoadTimeline.now()
        var slot = (oldest + inFlight - unsent) % pipeline
        for _ in 0..<unsent {
            sentAt[slot] = now
            slot = slot + 1 == pipeline ? 0 : slot + 1
        }
        unsent = 0
    }
}
