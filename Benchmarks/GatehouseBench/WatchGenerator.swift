import GatehouseBase
import GatehousePosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The loop side of `gatehouse-bench watch`: N watching connections and one driver connection,
/// all on one generator ``EventLoop`` (epoll, level-triggered), as the load mode's generator.
/// One thread means every timestamp of a change (its send, its answer, its push) is read on the
/// same thread from the same monotonic clock, and no state below needs a lock.
///
/// `@unchecked Sendable`: created on the coordinating thread, touched only on the loop's thread
/// once handed over (through `loop.execute`), and read again by the coordinator only after the
/// loop's thread has been joined. The atomics are what the coordinator reads while it runs.
final class WatchRunState: @unchecked Sendable {
    let loop: EventLoop
    /// The watched profiles' ids as bytes, by watcher index.
    let profileIDs: [[UInt8]]
    let changesTotal: Int
    let inFlight: Int

    // Progress, for the coordinator while the loop runs.
    /// Watchers whose `hello` and `watch` were both answered `ok`.
    let watching = Atomic<Int>(0)
    /// Changes whose answer and push have both arrived.
    let completed = Atomic<Int>(0)
    let failed = Atomic<Bool>(false)

    // Loop-thread state. Per watcher index: the change on its way to that profile (0: none).
    private var sentAt: [UInt64]
    private var answeredAt: [UInt64]
    private var pushedAt: [UInt64]
    private(set) var fromSend = LatencyHistogram()
    /// How long a push came after its change's answer, for pushes that came after it...
    private(set) var pushLag = LatencyHistogram()
    /// ...and how long before it, for pushes that beat their answer.
    private(set) var pushLead = LatencyHistogram()
    private(set) var pushes = 0
    private(set) var unexpectedPushes = 0
    private(set) var closedWatchers = 0
    private(set) var changesSent = 0
    private(set) var failure: String?
    private var incomplete = 0
    private var random: UInt64 = 0x9E37_79B9_7F4A_7C15
    var driver: WatchDriverConnection?
    /// One read buffer for every connection: a line that straddles two reads is carried by its
    /// connection (rare: lines are ~100 bytes).
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)

    init(loop: EventLoop, profileIDs: [[UInt8]], changes: Int, inFlight: Int) {
        self.loop = loop
        self.profileIDs = profileIDs
        self.changesTotal = changes
        self.inFlight = max(1, min(inFlight, profileIDs.count))
        sentAt = Array(repeating: 0, count: profileIDs.count)
        answeredAt = Array(repeating: 0, count: profileIDs.count)
        pushedAt = Array(repeating: 0, count: profileIDs.count)
    }

    deinit {
        scratch.deallocate()
    }

    func fail(_ message: String) {
        if failure == nil { failure = message }
        failed.store(true, ordering: .releasing)
    }

    func watcherReady() {
        watching.add(1, ordering: .releasing)
    }

    func watcherClosed() {
        closedWatchers += 1
    }

    // MARK: Changes

    /// Keeps `inFlight` changes unfinished (answer or push outstanding) until all are sent. Each
    /// goes to a random watched profile that has no change on its way, so every push matches one
    /// change.
    func sendMore() {
        guard let driver, failure == nil else { return }
        while incomplete < inFlight, changesSent < changesTotal {
            var index: Int
            repeat {
                random ^= random << 13
                random ^= random >> 7
                random ^= random << 17
                index = Int(random % UInt64(profileIDs.count))
            } while sentAt[index] != 0
            incomplete += 1
            changesSent += 1
            sentAt[index] = driver.send(change: changesSent, to: index)
        }
    }

    /// The driver read the answer to the change sent to `index`.
    func answered(_ index: Int, at now: UInt64) {
        answeredAt[index] = now
        if pushedAt[index] != 0 { finish(index) }
    }

    /// Watcher `index` read a push line.
    func pushed(_ index: Int, _ line: UnsafeRawBufferPointer, at now: UInt64) {
        pushes += 1
        guard Self.names(profileIDs[index], line) else {
            return fail("a push for another profile reached watcher \(index): \(String(decoding: line, as: UTF8.self))")
        }
        guard sentAt[index] != 0, pushedAt[index] == 0 else {
            unexpectedPushes += 1
            return
        }
        pushedAt[index] = now
        if answeredAt[index] != 0 { finish(index) }
    }

    private func finish(_ index: Int) {
        let sent = sentAt[index], answer = answeredAt[index], push = pushedAt[index]
        fromSend.record(nanoseconds: push > sent ? push - sent : 0)
        if push >= answer {
            pushLag.record(nanoseconds: push - answer)
        } else {
            pushLead.record(nanoseconds: answer - push)
        }
        sentAt[index] = 0
        answeredAt[index] = 0
        pushedAt[index] = 0
        incomplete -= 1
        completed.add(1, ordering: .releasing)
        sendMore()
    }

    private static let pushPrefix = Array(#"{"push":"changed","profile_id":""#.utf8)

    /// Whether `line` is a push naming the profile `id`.
    private static func names(_ id: [UInt8], _ line: UnsafeRawBufferPointer) -> Bool {
        let prefix = pushPrefix
        guard line.count > prefix.count + id.count else { return false }
        return prefix.withUnsafeBytes { memcmp(line.baseAddress!, $0.baseAddress!, prefix.count) == 0 }
            && id.withUnsafeBytes { memcmp(line.baseAddress! + prefix.count, $0.baseAddress!, id.count) == 0 }
            && line[prefix.count + id.count] == UInt8(ascii: "\"")
    }
}

/// Reads lines from a non-blocking socket into the run's shared buffer; carries a partial line.
struct LineReader {
    private var partial: [UInt8] = []

    enum Outcome {
        case more
        case wouldBlock
        case closed
        case failed(Int32)
    }

    /// One read(2); calls `line` for each complete line.
    mutating func read(_ descriptor: Int32, into scratch: UnsafeMutableRawBufferPointer,
                       _ line: (UnsafeRawBufferPointer) -> Void) -> Outcome
    {
        let count = Glibc.read(descriptor, scratch.baseAddress!, scratch.count)
        if count == 0 { return .closed }
        if count < 0 {
            switch errno {
            case EINTR: return .more
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case let code: return .failed(code)
            }
        }
        let base = UnsafeRawPointer(scratch.baseAddress!)
        var offset = 0
        while offset < count, let newline = memchr(base + offset, Int32(UInt8(ascii: "\n")), count - offset) {
            let end = base.distance(to: UnsafeRawPointer(newline))
            if partial.isEmpty {
                line(UnsafeRawBufferPointer(start: base + offset, count: end - offset))
            } else {
                partial.append(contentsOf: UnsafeRawBufferPointer(start: base + offset, count: end - offset))
                partial.withUnsafeBytes { line($0) }
                partial.removeAll(keepingCapacity: false)
            }
            offset = end + 1
        }
        if offset < count { partial.append(contentsOf: UnsafeRawBufferPointer(start: base + offset, count: count - offset)) }
        return .more
    }
}

/// One watching connection: its first two lines answer `hello` and `watch`; every later line
/// must be a push about its profile.
final class WatcherConnection: IOEventHandler, @unchecked Sendable {
    let index: Int
    let descriptor: Int32
    private let state: WatchRunState
    private var reader = LineReader()
    private var answers = 0
    private var isRegistered = false

    init(index: Int, descriptor: Int32, state: WatchRunState) {
        self.index = index
        self.descriptor = descriptor
        self.state = state
    }

    func start() {
        do {
            try state.loop.register(descriptor, interest: .readable, handler: self)
            isRegistered = true
        } catch {
            state.fail("cannot watch a watcher's socket: \(error)")
        }
    }

    func stop() {
        guard isRegistered else { return }
        isRegistered = false
        state.loop.unregister(descriptor)
    }

    func handle(_ events: IOEvents) {
        guard isRegistered else { return }
        let now = EventLoop.monotonicNanoseconds()
        let outcome = reader.read(descriptor, into: state.scratch) { line in take(line, at: now) }
        switch outcome {
        case .more, .wouldBlock:
            return
        case .closed:
            state.watcherClosed()
            if answers < 2 { state.fail("the server closed watcher \(index) before it answered hello and watch") }
            stop()
        case .failed(let code):
            state.watcherClosed()
            state.fail("reading watcher \(index) failed: \(SystemError("read", errno: code))")
            stop()
        }
    }

    private func take(_ line: UnsafeRawBufferPointer, at now: UInt64) {
        if answers < 2, !AnswerLine.isPush(line) {
            answers += 1
            if AnswerLine.isError(line) {
                return state.fail("watcher \(index): \(answers == 1 ? "hello" : "watch") failed: \(String(decoding: line, as: UTF8.self))")
            }
            if answers == 2 { state.watcherReady() }
            return
        }
        guard AnswerLine.isPush(line) else {
            return state.fail("watcher \(index) read a line that is no push: \(String(decoding: line, as: UTF8.self))")
        }
        state.pushed(index, line, at: now)
    }
}

/// The connection that makes the changes: `currency.transact` credits of 1 COINS, answered in
/// order (PROTOCOL.md), so the oldest change sent is the one each answer belongs to.
final class WatchDriverConnection: IOEventHandler, @unchecked Sendable {
    private let descriptor: Int32
    private let state: WatchRunState
    private let tag: String
    private var reader = LineReader()
    /// Watcher indices of the changes sent and not yet answered, oldest first.
    private var order: [Int] = []
    private var orderHead = 0
    private var output: [UInt8] = []
    private var waitingForWritable = false
    private var isRegistered = false

    /// `tag` makes the idempotency keys unique to this run.
    init(descriptor: Int32, state: WatchRunState, tag: String) {
        self.descriptor = descriptor
        self.state = state
        self.tag = tag
    }

    func start() {
        do {
            try state.loop.register(descriptor, interest: .readable, handler: self)
            isRegistered = true
        } catch {
            state.fail("cannot watch the driver's socket: \(error)")
        }
    }

    func stop() {
        guard isRegistered else { return }
        isRegistered = false
        state.loop.unregister(descriptor)
    }

    /// Sends change number `number` to watcher `index`'s profile; answers the send time.
    func send(change number: Int, to index: Int) -> UInt64 {
        var line = #"{"id":\#(number),"op":"currency.transact","profile_id":""#
        line += String(decoding: state.profileIDs[index], as: UTF8.self)
        line += #"","currency":"COINS","amount":1,"idempotency_key":"watch-\#(tag)-\#(number)"}"#
        line += "\n"
        output.append(contentsOf: line.utf8)
        order.append(index)
        let now = EventLoop.monotonicNanoseconds()
        flush()
        return now
    }

    func handle(_ events: IOEvents) {
        guard isRegistered else { return }
        if events.contains(.writable) { flush() }
        guard !events.isDisjoint(with: [.readable, .hangup, .error]) else { return }
        let now = EventLoop.monotonicNanoseconds()
        switch reader.read(descriptor, into: state.scratch, { line in take(line, at: now) }) {
        case .more, .wouldBlock:
            return
        case .closed:
            state.fail("the server closed the driver connection")
            stop()
        case .failed(let code):
            state.fail("reading the driver's answers failed: \(SystemError("read", errno: code))")
            stop()
        }
    }

    private func take(_ line: UnsafeRawBufferPointer, at now: UInt64) {
        if AnswerLine.isPush(line) { return }
        guard orderHead < order.count else {
            return state.fail("the driver read a line that answers nothing: \(String(decoding: line, as: UTF8.self))")
        }
        guard !AnswerLine.isError(line) else {
            return state.fail("a change failed: \(String(decoding: line, as: UTF8.self))")
        }
        let index = order[orderHead]
        orderHead += 1
        if orderHead > 1024, orderHead * 2 > order.count {
            order.removeFirst(orderHead)
            orderHead = 0
        }
        state.answered(index, at: now)
    }

    private func flush() {
        guard isRegistered, !output.isEmpty else { return }
        var written = 0
        while written < output.count {
            let count = output.withUnsafeBytes { raw in
                Glibc.send(descriptor, raw.baseAddress! + written, raw.count - written, Int32(MSG_NOSIGNAL))
            }
            if count >= 0 {
                written += count
                continue
            }
            let code = errno
            if code == EINTR { continue }
            guard code == EAGAIN || code == EWOULDBLOCK else {
                state.fail("sending a change failed: \(SystemError("send", errno: code))")
                return stop()
            }
            break
        }
        output.removeFirst(written)
        let mustWait = !output.isEmpty
        if mustWait != waitingForWritable {
            waitingForWritable = mustWait
            state.loop.setInterest(descriptor, mustWait ? [.readable, .writable] : .readable)
        }
    }
}
