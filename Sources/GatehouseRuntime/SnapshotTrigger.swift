import Synchronization

/// How a project asks for its own snapshot once it has logged enough since the last one,
/// without holding a reference to the checkpointer (which holds the projects).
///
/// Enough is the larger of a floor and half the body of the project's last snapshot. A
/// snapshot costs in proportion to the state, so a big tenant under steady writes is
/// snapshotted in proportion to what it logs rather than every floor's worth (a million
/// profiles make a body of about 530 MiB: a snapshot every 265 MiB of log instead of every 64,
/// a quarter of the CPU), and a restart replays at most about half a body after loading one.
final class SnapshotTrigger: Sendable {
    /// Payload bytes a project may always log before it is snapshotted.
    let loggedBytesThreshold: Int
    private let handler = Mutex<(@Sendable (Project) -> Void)?>(nil)

    init(loggedBytesThreshold: Int) {
        self.loggedBytesThreshold = loggedBytesThreshold
    }

    /// Payload bytes a project may log after a snapshot whose body was `bodyBytes` long.
    func dueBytes(afterSnapshotBody bodyBytes: Int) -> Int {
        max(loggedBytesThreshold, bodyBytes / 2)
    }

    func request(_ project: Project) {
        let handler = handler.withLock { $0 }
        handler?(project)
    }

    func install(_ newHandler: (@Sendable (Project) -> Void)?) {
        handler.withLock { $0 = newHandler }
    }
}
