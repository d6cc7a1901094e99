public import GatehouseBase
import CGatehouseLinux
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What a registered descriptor is waiting for, or what happened to it.
public struct IOEvents: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let readable = IOEvents(rawValue: EPOLLIN.rawValue)
    public static let writable = IOEvents(rawValue: EPOLLOUT.rawValue)
    public static let hangup = IOEvents(rawValue: EPOLLHUP.rawValue)
    public static let error = IOEvents(rawValue: EPOLLERR.rawValue)
    // `hangup` and `error` are always reported, whether asked for or not.
}

/// Something registered with an ``EventLoop``. Its methods run on the loop's thread only.
public protocol IOEventHandler: AnyObject {
    func handle(_ events: IOEvents)
}

/// One thread running `epoll_wait`, the handlers of the descriptors registered with it, timers,
/// and tasks other threads hand it with ``execute(_:)``.
///
/// Everything registered with a loop is confined to its thread: handlers hold plain mutable
/// state and are only touched from `handle(_:)`, timers and executed tasks. That is why this
/// class (and the connection types built on it) are `@unchecked Sendable`: what crosses threads
/// is only the `execute` queue, which a `Mutex` guards, and the eventfd that wakes the loop.
public final class EventLoop: @unchecked Sendable {
    public let name: String
    private let epollDescriptor: Int32
    private let wakeDescriptor: Int32
    private let inbox = Mutex(Inbox())
    private let stopped = Atomic<Bool>(false)
    private let thread = Mutex<OSThread?>(nil)

    // Loop-thread state.
    /// Indexed by descriptor (descriptors are small integers the kernel reuses): a lookup per
    /// event is an array index, not a hash.
    private var handlers: [(any IOEventHandler)?] = []
    private var timers: [LoopTimer] = []
    private var endOfTurn: [() -> Void] = []
    private var nextTimerID = 0

    private struct Inbox {
        var tasks: [@Sendable () -> Void] = []
        /// Whether a wake-up is already on its way; saves an eventfd write per task under load.
        var wakePending = false
    }

    private struct LoopTimer {
        let id: Int
        var deadline: UInt64
        let interval: UInt64
        /// Runs once, then goes.
        let once: Bool
        let body: () -> Void
    }

    public init(name: String) throws(SystemError) {
        self.name = name
        self.epollDescriptor = try blockingSyscall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        self.wakeDescriptor = try blockingSyscall("eventfd") {
            eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        }
        _ = cgh_epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, wakeDescriptor, EPOLLIN.rawValue)
    }

    deinit {
        Glibc.close(wakeDescriptor)
        Glibc.close(epollDescriptor)
    }

    /// Starts the loop on a thread of its own.
    public func start() {
        let started = OSThread.start(named: name) { self.run() }
        thread.withLock { $0 = started }
    }

    /// Whether the caller is running on this loop's thread.
    public var inEventLoop: Bool {
        thread.withLock { $0 }?.isCurrent ?? false
    }

    /// Runs `task` on the loop's thread, soon. Safe from any thread.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        let mustWake = inbox.withLock { inbox in
            inbox.tasks.append(task)
            if inbox.wakePending { return false }
            inbox.wakePending = true
            return true
        }
        if mustWake { wake() }
    }

    /// Asks the loop to finish its current iteration and exit; ``waitUntilStopped()`` joins it.
    public func stop() {
        stopped.store(true, ordering: .releasing)
        wake()
    }

    /// Blocks until the loop's thread has exited. Never call it from the loop itself.
    public func waitUntilStopped() {
        guard let thread = thread.withLock({ $0 }) else { return }
        precondition(!inEventLoop, "an event loop cannot wait for itself")
        thread.join()
    }

    // MARK: Registration (loop thread only)

    public func register(_ descriptor: Int32, interest: IOEvents, handler: any IOEventHandler) throws(SystemError) {
        _ = try blockingSyscall("epoll_ctl(ADD)") {
            cgh_epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, descriptor, interest.rawValue)
        }
        let index = Int(descriptor)
        if index >= handlers.count { handlers.append(contentsOf: repeatElement(nil, count: max(index + 1, handlers.count * 2) - handlers.count)) }
        handlers[index] = handler
    }

    public func setInterest(_ descriptor: Int32, _ interest: IOEvents) {
        _ = cgh_epoll_ctl(epollDescriptor, EPOLL_CTL_MOD, descriptor, interest.rawValue)
    }

    /// Removes a descriptor; call it before closing the descriptor.
    public func unregister(_ descriptor: Int32) {
        _ = cgh_epoll_ctl(epollDescriptor, EPOLL_CTL_DEL, descriptor, 0)
        if Int(descriptor) < handlers.count { handlers[Int(descriptor)] = nil }
    }

    /// Calls `body` on the loop's thread every `interval` until the loop stops; returns its id.
    @discardableResult
    public func scheduleRepeating(every interval: Duration, _ body: @escaping () -> Void) -> Int {
        schedule(after: interval, once: false, body)
    }

    /// Calls `body` on the loop's thread once, after `delay` (unless cancelled first); returns its id.
    @discardableResult
    public func scheduleOnce(after delay: Duration, _ body: @escaping () -> Void) -> Int {
        schedule(after: delay, once: true, body)
    }

    private func schedule(after interval: Duration, once: Bool, _ body: @escaping () -> Void) -> Int {
        nextTimerID += 1
        let nanoseconds = UInt64(interval.components.seconds) * 1_000_000_000
            + UInt64(interval.components.attoseconds / 1_000_000_000)
        timers.append(LoopTimer(id: nextTimerID, deadline: Self.monotonicNanoseconds() + nanoseconds,
                                interval: max(nanoseconds, 1_000_000), once: once, body: body))
        return nextTimerID
    }

    public func cancelTimer(_ id: Int) {
        timers.removeAll { $0.id == id }
    }

    /// Monotonic time in nanoseconds, for deadlines that must not jump with the wall clock.
    public static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    // MARK: The loop

    private func run() {
        let capacity = 256
        var descriptors = [Int32](repeating: 0, count: capacity)
        var events = [UInt32](repeating: 0, count: capacity)
        while !stopped.load(ordering: .acquiring) {
            let count = descriptors.withUnsafeMutableBufferPointer { fds in
                events.withUnsafeMutableBufferPointer { evs in
                    cgh_epoll_wait(epollDescriptor, fds.baseAddress, evs.baseAddress, Int32(capacity), waitTimeoutMilliseconds())
                }
            }
            if count < 0 {
                precondition(errno == EINTR, "epoll_wait failed: errno \(errno)")
                continue
            }
            for index in 0..<Int(count) {
                let descriptor = descriptors[index]
                if descriptor == wakeDescriptor {
                    drainWake()
                } else if Int(descriptor) < handlers.count, let handler = handlers[Int(descriptor)] {
                    handler.handle(IOEvents(rawValue: events[index]))
                }
            }
            // What the events set up goes first (the requests they read are handed over to
            // their projects), then tasks (answers to write), whose own end-of-turn work follows.
            runEndOfTurn()
            runTasks()
            runDueTimers()
            runEndOfTurn()
        }
        runTasks()
        runEndOfTurn()
    }

    /// Runs `body` on this loop's thread once the current phase of the turn is handled (its
    /// events, or its tasks and timers): work that many of them share (one hand-over of many
    /// requests, one write of many answers) is done once. Loop thread only.
    public func atEndOfTurn(_ body: @escaping () -> Void) {
        endOfTurn.append(body)
    }

    private func runEndOfTurn() {
        while !endOfTurn.isEmpty {
            var bodies: [() -> Void] = []
            swap(&bodies, &endOfTurn)
            for body in bodies { body() }
        }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeDescriptor, &one, 8)
    }

    private func drainWake() {
        var value: UInt64 = 0
        _ = Glibc.read(wakeDescriptor, &value, 8)
    }

    private func runTasks() {
        // Tasks queued while these run are picked up on the next turn, so a task that queues
        // another cannot starve the descriptors.
        // Most turns have none: taking the (empty) array would still copy its buffer.
        let tasks = inbox.withLock { inbox -> [@Sendable () -> Void] in
            inbox.wakePending = false
            guard !inbox.tasks.isEmpty else { return [] }
            var taken: [@Sendable () -> Void] = []
            swap(&taken, &inbox.tasks)
            return taken
        }
        for task in tasks { task() }
    }

    private func waitTimeoutMilliseconds() -> Int32 {
        if inbox.withLock({ !$0.tasks.isEmpty }) { return 0 }
        var earliest: UInt64?
        for timer in timers where earliest.map({ timer.deadline < $0 }) ?? true { earliest = timer.deadline }
        guard let next = earliest else { return 1000 }
        let now = Self.monotonicNanoseconds()
        if next <= now { return 0 }
        return Int32(min((next - now + 999_999) / 1_000_000, 1000))
    }

    /// Runs the timers that are due, each once; a body may schedule or cancel timers.
    private func runDueTimers() {
        let now = Self.monotonicNanoseconds()
        var due: [() -> Void] = []
        var index = 0
        while index < timers.count {
            guard timers[index].deadline <= now else {
                index += 1
                continue
            }
            due.append(timers[index].body)
            if timers[index].once {
                timers.remove(at: index)
            } else {
                timers[index].deadline = now + timers[index].interval
                index += 1
            }
        }
        for body in due { body() }
    }
}
