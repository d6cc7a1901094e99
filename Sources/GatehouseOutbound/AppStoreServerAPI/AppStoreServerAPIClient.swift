public import GatehouseAppStore
import GatehouseBase
import GatehouseHTTP
import GatehouseWire

/// Asks the App Store Server API about a customer's purchases (DESIGN.md, "Asking Apple"): the
/// transaction history and the subscription statuses, as Apple's server libraries do, under a
/// JWT signed with the project's In-App Purchase key.
///
/// It answers Apple's signed strings as they came and verifies none of them: every one is a JWS
/// for ``AppStoreVerifier`` to check before it is believed. Requests go through a
/// ``RetryingSender`` (5xx, 429 and Apple's retryable error codes are retried; 401 is not).
public struct AppStoreServerAPIClient: Sendable {
    public static let productionBaseURL = "https://api.storekit.apple.com"
    public static let sandboxBaseURL = "https://api.storekit-sandbox.apple.com"

    /// Apple's `errorCode`s that say "try again later".
    static let retryableAPIErrorCodes: Set<Int64> = [4_040_002, 4_040_004, 4_040_006, 5_000_001]
    /// Apple's `errorCode`s for a transaction id it does not know.
    static let notFoundAPIErrorCodes: Set<Int64> = [4_040_005, 4_040_010]

    public struct Settings: Sendable {
        /// Replaces both of Apple's base URLs (`--app-store-api-url`, tests).
        public var baseURLOverride: String?
        public var connectTimeout: Duration
        /// Per request, connecting included; the sender's deadline bounds the retries.
        public var requestTimeout: Duration
        public var responseBytesMax: Int
        /// History pages followed at most (Apple sends up to 20 transactions a page).
        public var historyPagesMax: Int

        public init(
            baseURLOverride: String? = nil, connectTimeout: Duration = .seconds(5), requestTimeout: Duration = .seconds(15),
            responseBytesMax: Int = 1 << 20, historyPagesMax: Int = 500
        ) {
            self.baseURLOverride = baseURLOverride
            self.connectTimeout = connectTimeout
            self.requestTimeout = requestTimeout
            self.responseBytesMax = responseBytesMax
            self.historyPagesMax = historyPagesMax
        }
    }

    public let key: AppStoreServerAPIKey
    public let settings: Settings
    private let sender: RetryingSender
    private let tokens: AppStoreServerAPITokens

    /// - Parameter currentTimeMilliseconds: The wall clock the tokens' `iat` and `exp` are read
    ///   from; tests pass one they move.
    public init(
        key: AppStoreServerAPIKey, sender: RetryingSender, settings: Settings = Settings(),
        currentTimeMilliseconds: @escaping @Sendable () -> Int64 = AppStoreVerifier.systemTimeMilliseconds
    ) {
        self.key = key
        self.sender = sender
        self.settings = settings
        self.tokens = AppStoreServerAPITokens(key: key, currentTimeMilliseconds: currentTimeMilliseconds)
    }

    /// Where requests about data of `environment` go: the override if set, else Apple's
    /// production or sandbox API; `nil` for an environment Apple's API does not serve.
    public func baseURL(for environment: AppStoreEnvironment) -> String? {
        if let override = settings.baseURLOverride { return String(override.trimmingTrailingSlashes) }
        switch environment {
        case .production: return Self.productionBaseURL
        case .sandbox: return Self.sandboxBaseURL
        default: return nil
        }
    }

    /// Every signed transaction of the customer who made `transactionId` (any of their
    /// transaction ids), oldest first: `GET /inApps/v2/history/{transactionId}`, following
    /// `revision` while `hasMore`.
    public func transactionHistory(transactionId: String, environment: AppStoreEnvironment)
        async throws(AppStoreServerAPIError) -> [String]
    {
        let path = try Self.path("/inApps/v2/history/", transactionId)
        var signedTransactions: [String] = []
        var revision: String?
        for _ in 0..<settings.historyPagesMax {
            let query = revision.map { "revision=" + $0.percentEncodedForQuery } ?? ""
            let page = try AppStoreHistoryPage(try await get(path, query: query, environment: environment))
            signedTransactions += page.signedTransactions
            guard page.hasMore else { return signedTransactions }
            guard let next = page.revision, next != revision else {
                throw AppStoreServerAPIError(code: .invalidResponse, message: "history says hasMore without a new revision")
            }
            revision = next
        }
        throw AppStoreServerAPIError(
            code: .invalidResponse, message: "history goes on past \(settings.historyPagesMax) pages")
    }

    /// The latest state of each of the customer's subscriptions, in every group:
    /// `GET /inApps/v1/subscriptions/{transactionId}`.
    public func subscriptionStatuses(transactionId: String, environment: AppStoreEnvironment)
        async throws(AppStoreServerAPIError) -> [AppStoreSubscriptionStatus]
    {
        let path = try Self.path("/inApps/v1/subscriptions/", transactionId)
        return try AppStoreStatusesResponse.statuses(try await get(path, query: "", environment: environment))
    }

    // MARK: Requests

    /// The body of a 2xx answer to `GET path?query`, or the error its failure means.
    private func get(_ path: String, query: String, environment: AppStoreEnvironment)
        async throws(AppStoreServerAPIError) -> [UInt8]
    {
        guard let base = baseURL(for: environment) else {
            throw AppStoreServerAPIError(
                code: .invalidRequest, message: "the App Store Server API does not serve the \(environment) environment")
        }
        let headers = HTTPHeaders([
            (name: "Authorization", value: "Bearer " + (try tokens.current())),
            (name: "Accept", value: "application/json"),
        ])
        let request = OutboundRequest(
            method: "GET", url: base + path + (query.isEmpty ? "" : "?" + query), headers: headers,
            connectTimeout: settings.connectTimeout, timeout: settings.requestTimeout,
            responseBytesMax: settings.responseBytesMax)
        switch await sender.send(request, isRetryable: Self.isRetryable) {
        case .success(let response): return response.body
        case .failure(let failure): throw Self.error(for: failure)
        }
    }

    /// 429 and 5xx, and the 404s Apple marks as passing (an account or app not yet known).
    static func isRetryable(_ response: OutboundResponse) -> Bool {
        if RetryPolicy.isRetryableStatus(response.status) { return true }
        return AppStoreAPIErrorBody(response.body).map { retryableAPIErrorCodes.contains($0.errorCode) } ?? false
    }

    static func error(for failure: OutboundError) -> AppStoreServerAPIError {
        guard failure.code == .httpStatus, let response = failure.response else {
            let code: AppStoreServerAPIError.Code =
                switch failure.code {
                case .responseTooLarge: .invalidResponse
                case .invalidRequest: .invalidRequest
                default: .unavailable
                }
            return AppStoreServerAPIError(code: code, message: failure.description, underlying: failure)
        }
        let body = AppStoreAPIErrorBody(response.body)
        let code: AppStoreServerAPIError.Code =
            if response.status == 401 {
                .unauthorized
            } else if response.status == 404, let body, notFoundAPIErrorCodes.contains(body.errorCode) {
                .transactionNotFound
            } else if isRetryable(response) {
                .unavailable
            } else {
                .rejected
            }
        let apple = body.map { " (errorCode \($0.errorCode): \($0.errorMessage))" } ?? ""
        return AppStoreServerAPIError(
            code: code, message: "HTTP \(response.status)\(apple)", status: response.status, apiErrorCode: body?.errorCode,
            underlying: failure)
    }

    /// `prefix` and the transaction id, which must be one: 1 to 64 ASCII letters and digits
    /// (Apple's ids are digits), so nothing in it needs escaping.
    private static func path(_ prefix: String, _ transactionId: String) throws(AppStoreServerAPIError) -> String {
        guard (1...64).contains(transactionId.utf8.count), transactionId.utf8.allSatisfy(isASCIILetterOrDigit) else {
            throw AppStoreServerAPIError(code: .invalidRequest, message: "transaction id \(transactionId.debugDescription) is not one")
        }
        return prefix + transactionId
    }
}

private func isASCIILetterOrDigit(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        true
    default:
        false
    }
}

extension StringProtocol {
    fileprivate var trimmingTrailingSlashes: SubSequence {
        var text = self[...]
        while text.hasSuffix("/") { text = text.dropLast() }
        return text
    }

    /// Every byte but RFC 3986's unreserved ones as `%XX`: a revision is opaque and may hold
    /// `+`, `/` or `=`.
    fileprivate var percentEncodedForQuery: String {
        var encoded = ""
        for byte in utf8 {
            if isASCIILetterOrDigit(byte) || Array("-._~".utf8).contains(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + Hex.encode(CollectionOfOne(byte)).uppercased()
            }
        }
        return encoded
    }
}
