import CCurl
import GatehouseBase
import Synchronization

/// A libcurl multi handle driven by a thread of its own: every transfer, connection and TLS
/// session of an ``OutboundHTTPClient`` (or an ``SMTPSender``) lives here, and every wait
/// (`curl_multi_poll`) happens here, never on the concurrency pool. Other threads reach it only
/// through the inbox, under its lock, and wake it with `curl_multi_wakeup`. What a transfer is
/// (HTTP, SMTP) is the business of its ``CurlThreadTransfer``; the thread only drives it.
///
/// `@unchecked Sendable`: the multi handle and the transfers are touched only by the curl
/// thread, except `curl_multi_wakeup`, which libcurl lets any thread call and which is only
/// called under the inbox's lock while the handle is open.
final class CurlMultiThread: @unchecked Sendable {
    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    private let nextID = Atomic<UInt64>(1)

    // Curl-thread state.
    private var transfers: [UnsafeMutableRawPointer: (id: UInt64, transfer: any CurlThreadTransfer)] = [:]
    private var handles: [UInt64: UnsafeMutableRawPointer] = [:]

    private struct Submission {
        let id: UInt64
        /// Makes the transfer, on the curl thread; `nil` when it cannot be made, after answering why.
        let start: @Sendable () -> (any CurlThreadTransfer)?
        /// Answers the waiting task when the transfer is never started.
        let refuse: @Sendable (CurlStop) -> Void
    }

    private struct Inbox {
        /// `closing`: asked to close; `closed`: the thread took that in and the handle is going,
        /// so nobody may wake it; `released`: every handle is gone.
        enum State { case open, closing, closed, released }
        var state = State.open
        var submissions: [Submission] = []
        var cancellations: [UInt64] = []
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private static let globalInit: Bool = ccurl_global_init() == CURLE_OK

    init(connectionCacheSize: Int, threadName: String = "outbound-http") {
        precondition(Self.globalInit, "curl_global_init failed")
        guard let multi = curl_multi_init() else { preconditionFailure("curl_multi_init failed") }
        self.multi = multi
        // The connections kept open for reuse once their transfers are done (keep-alive).
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, connectionCacheSize)
        OSThread.detached(named: threadName) { self.run() }
    }

    // MARK: Any thread

    func send(_ request: OutboundRequest) async -> Result<OutboundResponse, OutboundError> {
        await perform(stopped: { $0.outboundError }) { CurlTransfer.make(request: request, completion: $0) }
    }

    /// Runs the transfer `make` sets up (on the curl thread, answering through the continuation
    /// it is given) and waits for its answer; `stopped` says what a transfer that the thread
    /// ends itself (closed, cancelled) answers.
    func perform<Success: Sendable, Failure: Error>(
        stopped: @escaping @Sendable (CurlStop) -> Failure,
        _ make: @escaping @Sendable (CheckedContinuation<Result<Success, Failure>, Never>) -> (any CurlThreadTransfer)?
    ) async -> Result<Success, Failure> {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        return await withTaskCancellationHandler {
            await withCheckedContinuation { completion in
                let submission = Submission(
                    id: id, start: { make(completion) }, refuse: { completion.resume(returning: .failure(stopped($0))) })
                // The cancellation handler takes the same lock: whichever comes second sees the other.
                let refusal = inbox.withLock { inbox -> CurlStop? in
                    guard inbox.state == .open else { return CurlStop(reason: .closed, message: "the client is closed") }
                    if Task.isCancelled { return CurlStop(reason: .cancelled, message: "cancelled before it was sent") }
                    inbox.submissions.append(submission)
                    curl_multi_wakeup(multi)
                    return nil
                }
                if let refusal { submission.refuse(refusal) }
            }
        } onCancel: {
            inbox.withLock { inbox in
                guard inbox.state == .open else { return }
                inbox.cancellations.append(id)
                curl_multi_wakeup(multi)
            }
        }
    }

    /// Fails what is pending or under way with ``OutboundError/Code/closed`` and returns once
    /// the thread has released every handle.
    func close() async {
        await withCheckedContinuation { waiter in
            let finished = inbox.withLock { inbox -> Bool in
                if inbox.state == .released { return true }
                inbox.closeWaiters.append(waiter)
                requestCloseLocked(&inbox)
                return false
            }
            if finished { waiter.resume() }
        }
    }

    /// Asks the thread to close without waiting for it (the client's `deinit`).
    func requestClose() {
        inbox.withLock { requestCloseLocked(&$0) }
    }

    private func requestCloseLocked(_ inbox: inout Inbox) {
        guard inbox.state == .open else { return }
        inbox.state = .closing
        curl_multi_wakeup(multi)
    }

    // MARK: The curl thread

    private func run() {
        while true {
            let (submissions, cancellations, closing) = inbox.withLock { inbox in
                defer {
                    inbox.submissions.removeAll()
                    inbox.cancellations.removeAll()
                    // From here on nobody calls curl_multi_wakeup: the handle is about to go.
                    if inbox.state == .closing { inbox.state = .closed }
                }
                return (inbox.submissions, inbox.cancellations, inbox.state == .closing)
            }
            for submission in submissions { start(submission, refusingWith: closing ? Self.closed : nil) }
            for id in cancellations { end(id, CurlStop(reason: .cancelled, message: "cancelled")) }
            if closing { break }
            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            collectFinished()
            _ = curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        for id in Array(handles.keys) { end(id, Self.closed) }
        curl_multi_cleanup(multi)
        let waiters = inbox.withLock { inbox in
            defer {
                inbox.closeWaiters.removeAll()
                inbox.state = .released
            }
            return inbox.closeWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private static let closed = CurlStop(reason: .closed, message: "the client was closed")

    private func start(_ submission: Submission, refusingWith refusal: CurlStop?) {
        if let refusal { return submission.refuse(refusal) }
        guard let transfer = submission.start() else { return }
        let added = curl_multi_add_handle(multi, transfer.easy)
        guard added == CURLM_OK else {
            let message = "curl_multi_add_handle: \(String(cString: curl_multi_strerror(added)))"
            return transfer.stop(CurlStop(reason: .failed, message: message))
        }
        transfers[transfer.easy] = (submission.id, transfer)
        handles[submission.id] = transfer.easy
    }

    private func collectFinished() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard ccurl_message_is_done(message) != 0, let easy = message.pointee.easy_handle,
                let transfer = remove(easy)
            else { continue }
            transfer.finish(ccurl_message_result(message))
        }
    }

    /// Stops transfer `id`, if it is still under way, and answers as `stop` says.
    private func end(_ id: UInt64, _ stop: CurlStop) {
        guard let easy = handles[id], let transfer = remove(easy) else { return }
        transfer.stop(stop)
    }

    /// Takes the transfer off the multi handle; its easy handle goes with the last reference.
    private func remove(_ easy: UnsafeMutableRawPointer) -> (any CurlThreadTransfer)? {
        guard let (id, transfer) = transfers.removeValue(forKey: easy) else { return nil }
        handles[id] = nil
        _ = curl_multi_remove_handle(multi, easy)
        return transfer
    }
}

/// A transfer the curl thread drives: it owns its easy handle, set up for whatever protocol,
/// and answers the task that waits for it. Made, driven and finished on the curl thread only.
protocol CurlThreadTransfer: AnyObject {
    var easy: UnsafeMutableRawPointer { get }
    /// libcurl is done with the transfer, and `code` says how it went.
    func finish(_ code: CURLcode)
    /// The thread ends the transfer itself, before libcurl finished it (or never started it).
    func stop(_ stop: CurlStop)
}

/// Why the curl thread ended a transfer itself, with a message for logs.
struct CurlStop: Sendable {
    enum Reason: Sendable { case closed, cancelled, failed }
    let reason: Reason
    let message: String
}
