import CCurl
import GatehouseBase
import Synchronization

/// A libcurl multi handle driven by a thread of its own: every transfer, connection and TLS
/// session of an ``OutboundHTTPClient`` lives here, and every wait (`curl_multi_poll`) happens
/// here, never on the concurrency pool. Other threads reach it only through the inbox, under
/// its lock, and wake it with `curl_multi_wakeup`.
///
/// `@unchecked Sendable`: the multi handle and the transfers are touched only by the curl
/// thread, except `curl_multi_wakeup`, which libcurl lets any thread call and which is only
/// called under the inbox's lock while the handle is open.
final class CurlMultiThread: @unchecked Sendable {
    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    private let nextID = Atomic<UInt64>(1)

    // Curl-thread state.
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var handles: [UInt64: UnsafeMutableRawPointer] = [:]

    private struct Submission {
        let id: UInt64
        let request: OutboundRequest
        let completion: CurlTransfer.Completion
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

    init(connectionCacheSize: Int) {
        precondition(Self.globalInit, "curl_global_init failed")
        guard let multi = curl_multi_init() else { preconditionFailure("curl_multi_init failed") }
        self.multi = multi
        // The connections kept open for reuse once their transfers are done (keep-alive).
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, connectionCacheSize)
        OSThread.detached(named: "outbound-http") { self.run() }
    }

    // MARK: Any thread

    func send(_ request: OutboundRequest) async -> Result<OutboundResponse, OutboundError> {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        return await withTaskCancellationHandler {
            await withCheckedContinuation { completion in
                // The cancellation handler takes the same lock: whichever comes second sees the other.
                let refusal = inbox.withLock { inbox -> OutboundError? in
                    guard inbox.state == .open else { return OutboundError(code: .closed, message: "the client is closed") }
                    if Task.isCancelled { return OutboundError(code: .cancelled, message: "cancelled before it was sent") }
                    inbox.submissions.append(Submission(id: id, request: request, completion: completion))
                    curl_multi_wakeup(multi)
                    return nil
                }
                if let refusal { completion.resume(returning: .failure(refusal)) }
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
            for submission in submissions { start(submission, refusingWith: closing ? Self.closedError : nil) }
            for id in cancellations { end(id, with: .failure(OutboundError(code: .cancelled, message: "cancelled"))) }
            if closing { break }
            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            collectFinished()
            _ = curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        for id in Array(handles.keys) { end(id, with: .failure(Self.closedError)) }
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

    private static let closedError = OutboundError(code: .closed, message: "the client was closed")

    private func start(_ submission: Submission, refusingWith refusal: OutboundError?) {
        if let refusal { return submission.completion.resume(returning: .failure(refusal)) }
        guard let transfer = CurlTransfer.make(id: submission.id, request: submission.request, completion: submission.completion)
        else { return }
        let added = curl_multi_add_handle(multi, transfer.easy)
        guard added == CURLM_OK else {
            let message = "curl_multi_add_handle: \(String(cString: curl_multi_strerror(added)))"
            return transfer.finish(with: .failure(OutboundError(code: .transport, message: message)))
        }
        transfers[transfer.easy] = transfer
        handles[transfer.id] = transfer.easy
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

    /// Stops transfer `id`, if it is still under way, and answers `result`.
    private func end(_ id: UInt64, with result: Result<OutboundResponse, OutboundError>) {
        guard let easy = handles[id], let transfer = remove(easy) else { return }
        transfer.finish(with: result)
    }

    /// Takes the transfer off the multi handle; its easy handle goes with the last reference.
    private func remove(_ easy: UnsafeMutableRawPointer) -> CurlTransfer? {
        guard let transfer = transfers.removeValue(forKey: easy) else { return nil }
        handles[transfer.id] = nil
        _ = curl_multi_remove_handle(multi, easy)
        return transfer
    }
}
