import Synchronization

/// How a project asks for its own snapshot once it has logged enough since the last one,
/// without holding a reference to the checkpointer (which holds the projects).
final class SnapshotTrigger: Sendable {
    /// Payload bytes a project may log before it is snapshotted.
    let loggedBytesThreshold: Int
    private let handler = Mutex<(@Sendable (Project) -> Void)?>(nil)

    init(loggedBytesThreshold: Int) {
        self.loggedBytesThreshold = loggedBytesThreshold
    }

    func isDue(loggedBytes: Int) -> Bool {
        loggedBytes >= loggedBytesThreshold
    }

    func request(_ project: Project) {
        let handler = handler.withLock { $0 }
        handler?(project)
    }

    func install(_ newHandler: (@Sendable (Project) -> Void)?) {
        handler.withLock { $0 = newHandler }
    }
}
