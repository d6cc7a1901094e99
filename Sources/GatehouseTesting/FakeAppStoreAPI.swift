public import GatehouseAppStore
import GatehouseHTTP
import GatehouseWire
import Synchronization

/// A local stand-in for Apple's App Store Server API on 127.0.0.1, which checks what it is sent
/// as Apple does: every request must carry a token signed ES256 by the test key, naming the
/// key, the issuer, the app and Apple's audience, living no more than an hour and valid now;
/// anything else is a 401. It serves a customer's history in pages of ``pageSize`` transactions
/// (signed by a test chain, as Apple signs them), their subscription statuses, and Apple's 404
/// for an id it does not know; ``failNext(_:)`` makes the next requests fail.
public final class FakeAppStoreAPI: Sendable {
    public enum Fault: Sendable {
        case status(Int)
        case tooManyRequests(retryAfterSeconds: Int)
        /// An answer with Apple's error body.
        case appleError(status: Int, errorCode: Int64)
        case dropConnection
        /// The right answer, after a delay.
        case slow(Duration)
        /// A 200 with a body of this many bytes.
        case oversizedBody(bytes: Int)
    }

    /// A request as it arrived, and why it was refused, if it was.
    public struct Seen: Sendable {
        public let path: String
        public let query: String?
        public let token: String?
        public let refusal: String?
    }

    public static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    public static let keyID = "2X9R4HXF34"
    public static let bundleID = "com.example.app"
    /// Transactions a history page holds unless the fake is told otherwise (Apple's hold 20).
    public static let defaultPageSize = 2

    public let key = TestAPIKey()
    public let chain: AppStoreTestChain
    /// The key's team and id, and the app, that tokens must name.
    public let issuerID: String
    public let keyID: String
    public let bundleID: String
    public let pageSize: Int
    private let routes: Routes
    private let server: LoopbackHTTPServer

    /// - Parameters:
    ///   - chain: What the transactions it makes up are signed by (`nil`: a chain of its own).
    ///   - currentTimeMilliseconds: The time the tokens are checked against (the client's).
    public init(
        chain: AppStoreTestChain? = nil, issuerID: String = FakeAppStoreAPI.issuerID, keyID: String = FakeAppStoreAPI.keyID,
        bundleID: String = FakeAppStoreAPI.bundleID, pageSize: Int = FakeAppStoreAPI.defaultPageSize,
        currentTimeMilliseconds: @escaping @Sendable () -> Int64
    ) throws {
        precondition(pageSize > 0, "a page holds a transaction")
        self.chain = try chain ?? AppStoreTestChain()
        self.issuerID = issuerID
        self.keyID = keyID
        self.bundleID = bundleID
        self.pageSize = pageSize
        let expected = Expected(issuerID: issuerID, keyID: keyID, bundleID: bundleID, pageSize: pageSize)
        routes = Routes(key: key, expected: expected, currentTimeMilliseconds: currentTimeMilliseconds)
        server = try LoopbackHTTPServer { [routes] in routes.handle($0) }
    }

    /// A fake checking tokens against `clock`, with a chain of its own.
    public convenience init(clock: ManualWallClock) throws {
        try self.init(currentTimeMilliseconds: clock.now)
    }

    public var baseURL: String { server.baseURL }
    public var acceptedConnections: Int { server.acceptedConnections }
    public var seen: [Seen] { routes.state.withLock { $0.seen } }

    public func stop() { server.stop() }

    /// The credentials the fake accepts, with its key.
    public func apiKey(issuerID: String? = nil, keyID: String? = nil, bundleID: String? = nil) throws -> AppStoreServerAPIKey {
        try AppStoreServerAPIKey(
            issuerID: issuerID ?? self.issuerID, keyID: keyID ?? self.keyID, privateKeyPEM: key.pem,
            bundleID: bundleID ?? self.bundleID)
    }

    /// Gives a customer `count` transactions, ids `first`, `first + 1`…, each findable by any of
    /// them; answers their JWS in order.
    @discardableResult
    public func addCustomer(firstTransactionID first: Int, count: Int) -> [String] {
        let ids = (first..<(first + count)).map(String.init)
        let signed = ids.map { id in
            chain.sign(payload: [
                "transactionId": .string(id), "originalTransactionId": .string(ids[0]), "bundleId": .string(bundleID),
                "productId": "pro.monthly", "type": "Auto-Renewable Subscription", "environment": "Sandbox",
                "purchaseDate": .int(1_767_225_600_000), "expiresDate": .int(1_769_904_000_000),
                "signedDate": .int(1_767_225_600_000),
            ])
        }
        setHistory(signed, findableBy: ids)
        let statuses = statusesBody(originalTransactionID: ids[0], signedTransaction: signed[count - 1])
        routes.state.withLock { state in
            for id in ids { state.statuses[id] = statuses }
        }
        return signed
    }

    /// Serves `signedTransactions` as the history of a customer found by any of `ids`.
    public func setHistory(_ signedTransactions: [String], findableBy ids: [String]) {
        routes.state.withLock { state in
            for id in ids { state.histories[id] = signedTransactions }
        }
    }

    private func statusesBody(originalTransactionID: String, signedTransaction: String) -> [UInt8] {
        let renewal = chain.sign(payload: [
            "originalTransactionId": .string(originalTransactionID), "autoRenewStatus": 1, "environment": "Sandbox",
            "signedDate": .int(1_767_225_600_000),
        ])
        let item: JSONObject = [
            "originalTransactionId": .string(originalTransactionID), "status": 1,
            "signedTransactionInfo": .string(signedTransaction), "signedRenewalInfo": .string(renewal),
        ]
        let body: JSONObject = [
            "environment": "Sandbox", "bundleId": .string(bundleID), "appAppleId": 1234,
            "data": [["subscriptionGroupIdentifier": "21000000", "lastTransactions": [.object(item)]]],
        ]
        return JSONWriter.serialize(.object(body))
    }

    /// The next requests (whose token passes) fail like this, one fault each, in order.
    public func failNext(_ faults: Fault...) {
        routes.state.withLock { $0.faults += faults }
    }
}

extension FakeAppStoreAPI {
    fileprivate struct State {
        var histories: [String: [String]] = [:]
        var statuses: [String: [UInt8]] = [:]
        var faults: [Fault] = []
        var seen: [Seen] = []
    }

    /// What a token must name.
    fileprivate struct Expected: Sendable {
        let issuerID: String
        let keyID: String
        let bundleID: String
        let pageSize: Int
    }

    /// What the server thread runs for each request.
    fileprivate final class Routes: Sendable {
        let key: TestAPIKey
        let expected: Expected
        let currentTimeMilliseconds: @Sendable () -> Int64
        let state = Mutex(State())

        init(key: TestAPIKey, expected: Expected, currentTimeMilliseconds: @escaping @Sendable () -> Int64) {
            self.key = key
            self.expected = expected
            self.currentTimeMilliseconds = currentTimeMilliseconds
        }

        func handle(_ request: HTTPRequest) -> LoopbackReply {
            let token = Self.bearerToken(request)
            let refusal = token.map(refusal(of:)) ?? "no bearer token"
            let fault = state.withLock { state -> Fault? in
                state.seen.append(Seen(path: request.path, query: request.query, token: token, refusal: refusal))
                return refusal == nil && !state.faults.isEmpty ? state.faults.removeFirst() : nil
            }
            // Apple's 401 has no body.
            if refusal != nil { return .respond(HTTPResponse(status: 401)) }
            switch fault {
            case .status(let status)?:
                return .json(status, #"{"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#)
            case .tooManyRequests(let seconds)?:
                return .json(
                    429, #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#,
                    headers: [(name: "Retry-After", value: String(seconds))])
            case .appleError(let status, let code)?:
                return .json(status, #"{"errorCode":\#(code),"errorMessage":"Try again later."}"#)
            case .dropConnection?:
                return .drop
            case .oversizedBody(let bytes)?:
                return .respond(.json(200, [UInt8](repeating: UInt8(ascii: " "), count: bytes)))
            case .slow(let delay)?:
                guard case .respond(let response, _) = route(request) else { return .drop }
                return .respond(response, delay: delay)
            case nil:
                return route(request)
            }
        }

        private func route(_ request: HTTPRequest) -> LoopbackReply {
            let segments = request.path.split(separator: "/").map(String.init)
            guard request.method == "GET", segments.count == 4, segments[0] == "inApps" else {
                return .json(404, #"{"errorCode":4040000,"errorMessage":"No such endpoint."}"#)
            }
            let id = segments[3]
            switch (segments[1], segments[2]) {
            case ("v2", "history"):
                guard let signed = state.withLock({ $0.histories[id] }) else { return Self.notFound }
                return historyPage(signed, revision: Self.queryValue("revision", in: request.query))
            case ("v1", "subscriptions"):
                guard let body = state.withLock({ $0.statuses[id] }) else { return Self.notFound }
                return .respond(.json(200, body))
            default:
                return .json(404, #"{"errorCode":4040000,"errorMessage":"No such endpoint."}"#)
            }
        }

        static let notFound = LoopbackReply.json(404, #"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#)

        /// A page from the offset the revision names. Revisions hold `+`, `/` and `=`, which the
        /// client must escape to get the right page back.
        private func historyPage(_ signed: [String], revision: String?) -> LoopbackReply {
            let offset: Int
            if let revision {
                guard revision.hasPrefix("rev+"), revision.hasSuffix("/="), let parsed = Int(revision.dropFirst(4).dropLast(2))
                else { return .json(400, #"{"errorCode":4000005,"errorMessage":"Invalid request revision."}"#) }
                offset = parsed
            } else {
                offset = 0
            }
            let end = min(offset + expected.pageSize, signed.count)
            let page: JSONObject = [
                "revision": .string("rev+\(end)/="), "bundleId": .string(expected.bundleID), "appAppleId": 1234,
                "environment": "Sandbox", "hasMore": .bool(end < signed.count),
                "signedTransactions": .array(signed[offset..<end].map { .string($0) }),
            ]
            return .respond(.json(200, JSONWriter.serialize(.object(page))))
        }

        /// Why Apple would refuse `token`, or `nil`.
        private func refusal(of token: String) -> String? {
            guard let decoded = TestAPIKey.decode(token) else { return "not a compact JWS" }
            let header = decoded.header
            let claims = decoded.claims
            guard header["alg"] == "ES256", header["typ"] == "JWT" else { return "header is not ES256 JWT" }
            guard header["kid"] == .string(expected.keyID) else { return "kid is not the key's id" }
            guard claims["iss"] == .string(expected.issuerID) else { return "iss is not the issuer" }
            guard claims["aud"] == "appstoreconnect-v1" else { return "aud is not appstoreconnect-v1" }
            guard claims["bid"] == .string(expected.bundleID) else { return "bid is not the app" }
            guard let iat = claims["iat"]?.numberValue?.int64, let exp = claims["exp"]?.numberValue?.int64 else {
                return "iat or exp missing"
            }
            let now = currentTimeMilliseconds() / 1000
            guard exp > iat, exp - iat <= 3600 else { return "exp is not within an hour of iat" }
            guard iat <= now + 60, now < exp else { return "token not valid now" }
            guard decoded.signature.count == 64 else { return "signature is not 64 bytes r || s" }
            guard key.verifies(signature: decoded.signature, of: decoded.signingInput) else { return "signature does not verify" }
            return nil
        }

        private static func bearerToken(_ request: HTTPRequest) -> String? {
            guard let value = request.headers["Authorization"], value.hasPrefix("Bearer ") else { return nil }
            return String(value.dropFirst("Bearer ".count))
        }

        /// The decoded value of `name` in `query`.
        static func queryValue(_ name: String, in query: String?) -> String? {
            guard let query else { return nil }
            for pair in query.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, parts[0] == name else { continue }
                return percentDecoded(parts[1])
            }
            return nil
        }

        private static func percentDecoded(_ text: Substring) -> String? {
            var bytes: [UInt8] = []
            var iterator = Array(text.utf8).makeIterator()
            while let byte = iterator.next() {
                guard byte == UInt8(ascii: "%") else {
                    // As servers read form-encoded queries: an unescaped "+" is a space.
                    bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                    continue
                }
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
