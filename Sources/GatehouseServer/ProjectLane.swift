import GatehouseCore
import GatehousePosix
import GatehouseRuntime
import GatehouseStorage
import GatehouseWire
import Synchronization

/// A project op's step on its way into the project's actor, with where its answer goes.
struct LaneJob: Sendable {
    let connection: Connection
    let slot: UInt64
    let requestID: JSONValue
    /// Checked again inside the actor: a key rotated (or a project deleted) after the request
    /// was read ends it as it would have ended a request run on the inbox.
    let principal: Principal
    let step: ProjectStep
    /// For the request metrics: the op's number, and when its line was read.
    let op: Int
    let receivedAt: UInt64
}

/// What became of a ``LaneJob``, on its way back to its connection.
struct LaneOutcome: Sendable {
    let connection: Connection
    let slot: UInt64
    let requestID: JSONValue
    let result: Result<Reply, GatehouseError>
    /// The log position that must be durable before the answer goes out: the newest change it
    /// shows (0: none that may still be lost).
    let durableAt: LSN
    let op: Int
    let receivedAt: UInt64

    var tally: RequestTally {
        if case .failure(let error) = result { return RequestTally(op: op, code: error.code) }
        return RequestTally(op: op, code: nil)
    }
}

/// The way into one project's actor for the project ops of every connection (``Operation/Body/project``).
///
/// Loops hand over the steps a turn read, together (``LaneBatch``); one task runs what has
/// gathered in rounds, each round one visit of the actor (``Project/perform(_:)``), so the
/// price of a hop is shared by every request of the round instead of paid twice by each. The
/// round's changes start their write together, and its answers go back to each loop in one
/// task once the log is durable up to the last change of the round.
///
/// Steps run in the order they were handed over, which keeps each connection's own order: a
/// connection hands a step over only when everything it has in flight is on this lane too.
final class ProjectLane: Sendable {
    let project: Project
    private let log: WriteAheadLog
    private let stats: ServerStats
    private let mailbox = Mailbox<LaneJob>()

    /// At most this many steps in one visit of the actor, so other work queued on it (a
    /// snapshot's capture, a timer) is not kept waiting behind a long backlog.
    static let roundJobsMax = 1024

    init(project: Project, log: WriteAheadLog, stats: ServerStats) {
        self.project = project
        self.log = log
        self.stats = stats
    }

    /// Queues steps (from a loop thread); a task starts if none is running.
    func submit(_ jobs: [LaneJob]) {
        if mailbox.post(jobs) {
            Task { await self.drain() }
        }
    }

    private func drain() async {
        while let jobs = mailbox.take(atMost: Self.roundJobsMax) {
            let outcomes = await project.perform { project in Self.run(jobs, in: project) }
            stats.laneRoundRan(steps: jobs.count)
            deliver(outcomes)
        }
    }

    /// Runs the round's steps. A step that fails may have seen any of the project's state (a
    /// balance, a key's first use, a token's holder): its error waits for the project's last
    /// change, unless its code shows no data (``ErrorCode/mayShowData``). A step refused for a
    /// rotated key saw nothing.
    private static func run(_ jobs: [LaneJob], in project: isolated Project) -> [LaneOutcome] {
        var outcomes: [LaneOutcome] = []
        outcomes.reserveCapacity(jobs.count)
        for job in jobs {
            let result: Result<Reply, GatehouseError>
            let durableAt: LSN
            if job.principal.isCurrent {
                result = Result { () throws(GatehouseError) in try job.step(project) }
                switch result {
                case .success(let reply): durableAt = reply.durableAt ?? 0
                case .failure(let error): durableAt = error.code.mayShowData ? project.lastCommittedLSN : 0
                }
            } else {
                result = .failure(Session.staleKeyError)
                durableAt = 0
            }
            outcomes.append(LaneOutcome(connection: job.connection, slot: job.slot, requestID: job.requestID, result: result,
                                        durableAt: durableAt, op: job.op, receivedAt: job.receivedAt))
        }
        return outcomes
    }

    /// Sends the round's answers to their loops: those that show nothing the log may still lose
    /// at once, the others once the log is durable up to the newest change among them (the
    /// round's changes share a sync). A connection's own order is kept by its slots: an answer
    /// that goes first waits there for those before it.
    private func deliver(_ outcomes: [LaneOutcome]) {
        let durable = log.durableLSN
        guard let waiting = outcomes.lazy.map(\.durableAt).max(), waiting > durable else { return Self.send(outcomes) }
        let now = outcomes.filter { $0.durableAt <= durable }
        let later = now.isEmpty ? outcomes : outcomes.filter { $0.durableAt > durable }
        if !now.isEmpty { Self.send(now) }
        log.whenDurable(waiting) { Self.send(later) }
    }

    /// One task per loop carries that loop's answers. A connection writes its answers as soon
    /// as the last of a run of them is in (a connection's steps are handed over together, so
    /// its answers of a round are next to each other), so the first clients can send their
    /// next requests while the loop is still writing to the others.
    private static func send(_ outcomes: [LaneOutcome]) {
        guard let loop = outcomes.first?.connection.loop else { return }
        if outcomes.allSatisfy({ $0.connection.loop === loop }) {
            // One loop serves them all (always, with one I/O thread).
            loop.execute { finish(outcomes) }
            return
        }
        var byLoop: [(loop: EventLoop, outcomes: [LaneOutcome])] = []
        for outcome in outcomes {
            let loop = outcome.connection.loop
            if let index = byLoop.firstIndex(where: { $0.loop === loop }) {
                byLoop[index].outcomes.append(outcome)
            } else {
                byLoop.append((loop, [outcome]))
            }
        }
        for (loop, outcomes) in byLoop {
            loop.execute { finish(outcomes) }
        }
    }

    /// On the connections' loop.
    private static func finish(_ outcomes: [LaneOutcome]) {
        // The answers of a round arrive together: one reading of the clock times them all.
        let now = EventLoop.monotonicNanoseconds()
        for index in outcomes.indices {
            let connection = outcomes[index].connection
            let endsRun = index == outcomes.count - 1 || outcomes[index + 1].connection !== connection
            connection.finish(outcomes[index], writingNow: endsRun, now: now)
        }
    }
}

/// The steps one loop turn read, by project: handed to each project's lane together at the
/// end of the turn. Confined to its loop's thread.
final class LaneBatch {
    private let loop: EventLoop
    private var pending: [(lane: ProjectLane, jobs: [LaneJob])] = []
    private var indexOfLane: [ObjectIdentifier: Int] = [:]

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// A lane's steps are handed over as soon as this many have gathered in a turn, so the actor
    /// starts on them while the loop is still reading the rest.
    static let handOverCount = 32

    func add(_ job: LaneJob, to lane: ProjectLane) {
        if pending.isEmpty {
            loop.atEndOfTurn { [self] in submitAll() }
        }
        let index: Int
        if let known = indexOfLane[ObjectIdentifier(lane)] {
            index = known
            pending[index].jobs.append(job)
        } else {
            index = pending.count
            indexOfLane[ObjectIdentifier(lane)] = index
            pending.append((lane, [job]))
        }
        if pending[index].jobs.count >= Self.handOverCount {
            lane.submit(pending[index].jobs)
            pending[index].jobs.removeAll(keepingCapacity: true)
        }
    }

    private func submitAll() {
        let batches = pending
        pending = []
        indexOfLane = [:]
        for (lane, jobs) in batches where !jobs.isEmpty { lane.submit(jobs) }
    }
}

/// Every project's lane, made on first use. A lane keeps its project alive, so the lanes of
/// deleted (or replaced) projects are dropped whenever a new lane is made.
final class ProjectLanes: Sendable {
    private let log: WriteAheadLog
    private let stats: ServerStats
    private let lanes = Mutex<[ObjectIdentifier: ProjectLane]>([:])

    init(log: WriteAheadLog, stats: ServerStats) {
        self.log = log
        self.stats = stats
    }

    func lane(for project: Project) -> ProjectLane {
        lanes.withLock { lanes in
            if let lane = lanes[ObjectIdentifier(project)] { return lane }
            lanes = lanes.filter { !$0.value.project.published.isDeleted }
            let lane = ProjectLane(project: project, log: log, stats: stats)
            lanes[ObjectIdentifier(project)] = lane
            return lane
        }
    }
}
