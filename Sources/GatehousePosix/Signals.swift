import CGatehouseLinux
@preconcurrency import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Process-wide signal handling.
public enum ProcessSignals {
    /// Writing to a peer that has gone must be an `EPIPE` error, never a process-killing
    /// signal. Every send already passes `MSG_NOSIGNAL`; this covers any other write path.
    public static func ignoreBrokenPipes() {
        cgh_ignore_sigpipe()
    }

    /// Calls `handler` (on a Dispatch queue) the first time SIGTERM or SIGINT arrives; a second
    /// one while it runs is ignored, so an impatient operator cannot interrupt the drain.
    /// Keep the returned object alive for as long as the handler should stay installed.
    public static func onTermination(_ handler: @escaping @Sendable (Int32) -> Void) -> TerminationWatcher {
        TerminationWatcher(handler: handler)
    }
}

/// Keeps the signal sources of ``ProcessSignals/onTermination(_:)`` alive.
public final class TerminationWatcher: Sendable {
    private let sources: [any DispatchSourceSignal]

    init(handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "gatehouse.signals")
        let fired = SignalOnce()
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in [SIGTERM, SIGINT] {
            // The default action must be off, or the kernel ends the process before Dispatch sees it.
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler {
                if fired.first() { handler(signalNumber) }
            }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }
}

/// True exactly once; the signal queue is serial, so a plain flag behind it is enough.
private final class SignalOnce: @unchecked Sendable {
    private var done = false

    func first() -> Bool {
        defer { done = true }
        return !done
    }
}
