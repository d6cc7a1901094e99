import GatehouseCore
public import GatehouseRuntime
import Synchronization

/// Who is speaking on a connection: nobody until `hello` succeeds, then a ``Principal``.
/// Read by the loop thread for inline answers and by the inbox task for deferred ones; the
/// connection lets only one of them run at a time, the lock makes that visible to both.
public final class Session: Sendable {
    private let principal = Mutex<Principal?>(nil)
    /// The connection's watches and its way to receive pushes.
    let watches: ConnectionWatches?

    public init() {
        watches = nil
    }

    init(watches: ConnectionWatches) {
        self.watches = watches
    }

    public var current: Principal? {
        principal.withLock { $0 }
    }

    /// What a request gets when the session's key was rotated or its project deleted since `hello`.
    static var staleKeyError: GatehouseError {
        GatehouseError(.unauthenticated, "the key of this session was rotated or its project deleted; say hello again")
    }

    /// A new `hello`: the watches made under the previous key end.
    func set(_ newValue: Principal?) {
        principal.withLock { $0 = newValue }
        watches?.releaseAll()
    }
}
