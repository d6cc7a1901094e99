import CCurl
import GatehouseBase
import GatehouseHTTP
#if canImport(Glibc)
import Glibc
#endif

/// One request on a libcurl easy handle, from its setup to its answer. Confined to the client's
/// curl thread: made, driven and finished there.
final class CurlTransfer: CurlThreadTransfer {
    typealias Completion = CheckedContinuation<Result<OutboundResponse, OutboundError>, Never>

    let easy: UnsafeMutableRawPointer
    private let completion: Completion
    private let responseBytesMax: Int
    private let discardsLongBodies: Bool
    private let addressPolicy: OutboundRequest.AddressPolicy
    private let started = ContinuousClock.now
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = CurlErrorBuffer()
    private var body: [UInt8] = []
    private var exceededBytesMax = false
    /// The class of the last address the policy refused, if any.
    private var refusedAddress: AddressClass?
    private var isFinished = false

    /// A transfer set up for `request`; `nil` when it cannot be, after answering why.
    static func make(request: OutboundRequest, completion: Completion) -> CurlTransfer? {
        if let refusal = request.refusal {
            completion.resume(returning: .failure(OutboundError(code: .invalidRequest, message: refusal)))
            return nil
        }
        guard let easy = curl_easy_init() else {
            completion.resume(returning: .failure(OutboundError(code: .transport, message: "curl_easy_init failed")))
            return nil
        }
        let transfer = CurlTransfer(easy: easy, request: request, completion: completion)
        if let failure = transfer.configure(request) {
            transfer.finish(with: .failure(OutboundError(code: .invalidRequest, message: failure)))
            return nil
        }
        return transfer
    }

    private init(easy: UnsafeMutableRawPointer, request: OutboundRequest, completion: Completion) {
        self.easy = easy
        self.completion = completion
        self.responseBytesMax = request.responseBytesMax
        self.discardsLongBodies = request.discardsLongBodies
        self.addressPolicy = request.addressPolicy
    }

    /// The easy handle is cleaned up here, after the multi handle has let it go (and before the
    /// error buffer it writes into goes).
    deinit {
        precondition(isFinished, "a transfer was dropped without an answer")
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
    }

    // MARK: Setup

    /// Sets every option; the first libcurl refuses is the failure.
    private func configure(_ request: OutboundRequest) -> String? {
        var options = CurlOptions(easy)
        func check(_ code: CURLcode, _ what: String) { options.check(code, what) }
        let schemes = request.schemes.joined(separator: ",")
        options.setBasics(
            errorBuffer: errorBuffer, url: request.url, schemes: schemes, connectTimeout: request.connectTimeout,
            timeout: request.timeout)
        // Redirects are not followed (libcurl's default); were one ever followed, it would keep to the same schemes.
        check(ccurl_easy_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, schemes), "redirect protocols")
        check(ccurl_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0), "no redirects")
        if !request.discardsLongBodies {
            // Refused before the body comes when Content-Length already says it is too long.
            check(ccurl_easy_setopt_off(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.responseBytesMax)), "size limit")
        }
        if request.addressPolicy == .publicOnly {
            check(ccurl_easy_setopt_opensocket(easy, curlTransferOpenSocket), "open socket function")
            check(ccurl_easy_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, Unmanaged.passUnretained(self).toOpaque()), "open socket data")
            // The environment's proxy would be the address connected to, and it would resolve the name itself.
            check(ccurl_easy_setopt_string(easy, CURLOPT_PROXY, ""), "no proxy")
        }
        check(ccurl_easy_setopt_callback(easy, CURLOPT_WRITEFUNCTION, curlTransferReceive), "write function")
        check(ccurl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque()), "write data")
        check(setMethod(request), "method")
        check(setHeaders(request.headers), "headers")
        return options.failure
    }

    private func setMethod(_ request: OutboundRequest) -> CURLcode {
        if !request.body.isEmpty || request.method == "POST" {
            let sized = ccurl_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
            guard sized == CURLE_OK else { return sized }
            // Copied by libcurl, so the transfer keeps no pointer into a Swift array.
            let copied =
                request.body.isEmpty
                ? ccurl_easy_setopt_string(easy, CURLOPT_COPYPOSTFIELDS, "")
                : request.body.withUnsafeBytes { ccurl_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
            guard copied == CURLE_OK else { return copied }
            return request.method == "POST" ? CURLE_OK : ccurl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, request.method)
        }
        switch request.method {
        case "GET": return ccurl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1)
        case "HEAD": return ccurl_easy_setopt_long(easy, CURLOPT_NOBODY, 1)
        default: return ccurl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, request.method)
        }
    }

    private func setHeaders(_ headers: HTTPHeaders) -> CURLcode {
        // "Expect:" keeps libcurl from asking `100-continue` and pausing before a large body.
        var lines = ["Expect:"]
        if headers["User-Agent"] == nil { lines.append("User-Agent: gatehouse") }
        // "Name;" is libcurl's spelling of a header with an empty value ("Name:" would remove it).
        lines += headers.map { $0.value.isEmpty ? "\($0.name);" : "\($0.name): \($0.value)" }
        for line in lines {
            guard let appended = curl_slist_append(headerList, line) else { return CURLE_OUT_OF_MEMORY }
            headerList = appended
        }
        return ccurl_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, headerList)
    }

    // MARK: Receiving

    /// Takes a piece of the body; answering less than `count` makes libcurl stop the transfer.
    fileprivate func receive(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard body.count + bytes.count <= responseBytesMax else {
            if discardsLongBodies { body.append(contentsOf: bytes.prefix(responseBytesMax - body.count)) }
            exceededBytesMax = true
            return 0
        }
        body.append(contentsOf: bytes)
        return bytes.count
    }

    /// Makes the socket for a connection to `address`, or refuses one the policy does not allow.
    fileprivate func openSocket(_ address: UnsafeMutablePointer<curl_sockaddr>) -> curl_socket_t {
        let peer = address.pointee
        if addressPolicy == .publicOnly {
            // A family that is neither IPv4 nor IPv6 is not a public address either.
            let kind = Self.addressClass(ccurl_sockaddr_address(address), family: peer.family, length: Int(peer.addrlen))
            guard let kind, kind.isPublic else {
                refusedAddress = kind ?? .unspecified
                return ccurl_socket_bad()
            }
        }
        return socket(peer.family, peer.socktype | Int32(SOCK_CLOEXEC.rawValue), peer.protocol)
    }

    /// The class of an IPv4 or IPv6 socket address; `nil` for any other family.
    private static func addressClass(_ address: UnsafePointer<sockaddr>, family: Int32, length: Int) -> AddressClass? {
        let raw = UnsafeRawPointer(address)
        switch family {
        case AF_INET where length >= MemoryLayout<sockaddr_in>.size:
            let ipv4 = raw.load(as: sockaddr_in.self).sin_addr
            return withUnsafeBytes(of: ipv4) { AddressClass.of(Array($0)) }
        case AF_INET6 where length >= MemoryLayout<sockaddr_in6>.size:
            let ipv6 = raw.loadUnaligned(as: sockaddr_in6.self).sin6_addr
            return withUnsafeBytes(of: ipv6) { AddressClass.of(Array($0)) }
        default:
            return nil
        }
    }

    // MARK: Finishing

    /// Answers the waiting task with how libcurl ended the transfer.
    func finish(_ code: CURLcode) {
        finish(with: result(of: code))
    }

    func stop(_ stop: CurlStop) {
        finish(with: .failure(stop.outboundError))
    }

    /// Answers the waiting task, once.
    func finish(with result: Result<OutboundResponse, OutboundError>) {
        guard !isFinished else { return }
        isFinished = true
        completion.resume(returning: result)
    }

    private func result(of code: CURLcode) -> Result<OutboundResponse, OutboundError> {
        let elapsed = ContinuousClock.now - started
        // A long body cut on purpose: the write callback stopped the transfer after the headers.
        let cut = code == CURLE_WRITE_ERROR && exceededBytesMax && discardsLongBodies
        guard code == CURLE_OK || cut else {
            var failure = error(for: code)
            failure.elapsed = elapsed
            return .failure(failure)
        }
        var status = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        return .success(OutboundResponse(status: status, headers: responseHeaders(), body: body, elapsed: elapsed))
    }

    private func responseHeaders() -> HTTPHeaders {
        var fields: [HTTPHeaders.Element] = []
        var header: UnsafeMutablePointer<curl_header>? = nil
        while let next = curl_easy_nextheader(easy, UInt32(CURLH_HEADER), -1, header) {
            fields.append((name: String(cString: next.pointee.name), value: String(cString: next.pointee.value)))
            header = next
        }
        return HTTPHeaders(fields)
    }

    private func error(for code: CURLcode) -> OutboundError {
        let detail = errorBuffer.detail(for: code)
        if exceededBytesMax || code == CURLE_FILESIZE_EXCEEDED {
            return OutboundError(code: .responseTooLarge, message: "response body over \(responseBytesMax) bytes")
        }
        if let refusedAddress, code == CURLE_COULDNT_CONNECT {
            // The class, never the address or the URL: the message reaches logs and the deliveries' list.
            return OutboundError(code: .addressRefused, message: "the host's address is \(refusedAddress.rawValue), not public")
        }
        let kind: OutboundError.Code =
            switch code {
            case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT: .cannotConnect
            case CURLE_OPERATION_TIMEDOUT: .timedOut
            case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE: .connectionLost
            case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
                CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
                CURLE_SSL_INVALIDCERTSTATUS:
                .tls
            case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL: .invalidRequest
            default: .transport
            }
        return OutboundError(code: kind, message: detail)
    }
}

extension CurlStop {
    var outboundError: OutboundError {
        let code: OutboundError.Code =
            switch reason {
            case .closed: .closed
            case .cancelled: .cancelled
            case .failed: .transport
            }
        return OutboundError(code: code, message: message)
    }
}

/// libcurl's write callback: `context` is the transfer, which the curl thread keeps alive for
/// as long as libcurl may call it.
private func curlTransferReceive(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.receive(UnsafeRawBufferPointer(start: data, count: size * count))
}

/// libcurl's open-socket callback: `context` is the transfer, as for the write callback.
private func curlTransferOpenSocket(
    _ context: UnsafeMutableRawPointer?, _ purpose: curlsocktype, _ address: UnsafeMutablePointer<curl_sockaddr>?
) -> curl_socket_t {
    guard let context, let address else { return ccurl_socket_bad() }
    return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().openSocket(address)
}
