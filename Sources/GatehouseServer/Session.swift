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

    /// A new `hello`: the watches made under the previous key end.
    func set(_ newValue: Principal?) {
        principal.withLock { $0 = newValue }
        watches?.releaseAll()
    }
}
