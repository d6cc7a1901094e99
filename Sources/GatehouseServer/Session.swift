import GatehouseCore
public import GatehouseRuntime
import Synchronization

/// Who is speaking on a connection: nobody until `hello` succeeds, then a ``Principal``.
/// Read by the loop thread for inline answers and by the inbox task for deferred ones; the
/// connection lets only one of them run at a time, the lock makes that visible to both.
public final class Session: Sendable {
    private struct State {
        var principal: Principal?
        /// The lane of the project last served, so a connection's steps do not look it up in
        /// the server-wide map (``ProjectLanes``) one by one.
        var lane: ProjectLane?
    }
    private let state = Mutex(State())
    /// The connection's watches and its way to receive pushes.
    let watches: ConnectionWatches?

    public init() {
        watches = nil
    }

    init(watches: ConnectionWatches) {
        self.watches = watches
    }

    public var current: Principal? {
        state.withLock { $0.principal }
    }

    /// The way into `project`'s actor, remembered for the next step.
    func lane(of project: Project, in lanes: ProjectLanes) -> ProjectLane {
        if let lane = state.withLock({ $0.lane }), lane.project === project { return lane }
        let lane = lanes.lane(for: project)
        state.withLock { $0.lane = lane }
        return lane
    }

    /// What a request gets when the session's key was rotated or its project deleted since `hello`.
    static var staleKeyError: GatehouseError {
        GatehouseError(.unauthenticated, "the key of this session was rotated or its project deleted; say hello again")
    }

    /// A new `hello`: the watches made under the previous key end.
    func set(_ newValue: Principal?) {
        state.withLock { $0 = State(principal: newValue, lane: nil) }
        watches?.releaseAll()
    }
}
