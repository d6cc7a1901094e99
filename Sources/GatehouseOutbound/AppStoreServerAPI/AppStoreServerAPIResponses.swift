import GatehouseWire

/// One page of Get Transaction History v2 (Apple's `HistoryResponse`).
struct AppStoreHistoryPage {
    var signedTransactions: [String]
    var revision: String?
    var hasMore: Bool

    init(_ body: [UInt8]) throws(AppStoreServerAPIError) {
        let fields = try ResponseFields(body, what: "history")
        signedTransactions = try fields.strings("signedTransactions")
        revision = try fields.string("revision")
        hasMore = try fields.bool("hasMore") ?? false
    }
}

/// Get All Subscription Statuses (Apple's `StatusResponse`), flattened: every group's
/// `lastTransactions`, in order.
enum AppStoreStatusesResponse {
    static func statuses(_ body: [UInt8]) throws(AppStoreServerAPIError) -> [AppStoreSubscriptionStatus] {
        let response = try ResponseFields(body, what: "statuses")
        var statuses: [AppStoreSubscriptionStatus] = []
        for group in try response.objects("data") {
            let groupIdentifier = try group.string("subscriptionGroupIdentifier")
            for item in try group.objects("lastTransactions") {
                statuses.append(
                    AppStoreSubscriptionStatus(
                        subscriptionGroupIdentifier: groupIdentifier,
                        originalTransactionId: try item.string("originalTransactionId"),
                        status: try item.int("status"), signedTransactionInfo: try item.string("signedTransactionInfo"),
                        signedRenewalInfo: try item.string("signedRenewalInfo")))
            }
        }
        return statuses
    }
}

/// Apple's error body (`ErrorPayload`): `{"errorCode": 4040010, "errorMessage": "…"}`.
struct AppStoreAPIErrorBody {
    var errorCode: Int64
    var errorMessage: String

    /// `nil` for a body that is not one (empty, HTML from a proxy).
    init?(_ body: [UInt8]) {
        guard let fields = try? ResponseFields(body, what: "error"), let code = try? fields.int64("errorCode"),
            let message = try? fields.string("errorMessage")
        else { return nil }
        errorCode = code
        errorMessage = message
    }
}

/// Reads the members of Apple's JSON answers: absent members (and nulls) are `nil`, since Apple
/// documents every one as optional; a member of the wrong type makes the answer
/// ``AppStoreServerAPIError/Code/invalidResponse``.
private struct ResponseFields {
    let object: JSONObject
    let what: String

    init(_ body: [UInt8], what: String) throws(AppStoreServerAPIError) {
        guard let object = (try? JSONParser.parse(body))?.objectValue else {
            throw AppStoreServerAPIError(code: .invalidResponse, message: "the \(what) answer is not a JSON object")
        }
        self.init(object, what: what)
    }

    private init(_ object: JSONObject, what: String) {
        self.object = object
        self.what = what
    }

    private func value(_ key: String) -> JSONValue? {
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    private func wrongType(_ key: String, _ expected: String) -> AppStoreServerAPIError {
        AppStoreServerAPIError(code: .invalidResponse, message: "\(what): \(key) is not \(expected)")
    }

    func string(_ key: String) throws(AppStoreServerAPIError) -> String? {
        guard let value = value(key) else { return nil }
        guard let string = value.stringValue else { throw wrongType(key, "a string") }
        return string
    }

    func bool(_ key: String) throws(AppStoreServerAPIError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard let bool = value.boolValue else { throw wrongType(key, "a boolean") }
        return bool
    }

    func int64(_ key: String) throws(AppStoreServerAPIError) -> Int64? {
        guard let value = value(key) else { return nil }
        guard let number = value.numberValue?.int64 else { throw wrongType(key, "an integer") }
        return number
    }

    func int(_ key: String) throws(AppStoreServerAPIError) -> Int? {
        try int64(key).map { Int(truncatingIfNeeded: $0) }
    }

    func strings(_ key: String) throws(AppStoreServerAPIError) -> [String] {
        guard let value = value(key) else { return [] }
        guard let array = value.arrayValue else { throw wrongType(key, "an array") }
        var strings: [String] = []
        for element in array {
            guard let string = element.stringValue else { throw wrongType(key, "an array of strings") }
            strings.append(string)
        }
        return strings
    }

    func objects(_ key: String) throws(AppStoreServerAPIError) -> [ResponseFields] {
        guard let value = value(key) else { return [] }
        guard let array = value.arrayValue else { throw wrongType(key, "an array") }
        var objects: [ResponseFields] = []
        for element in array {
            guard let object = element.objectValue else { throw wrongType(key, "an array of objects") }
            objects.append(ResponseFields(object, what: "\(what).\(key)"))
        }
        return objects
    }
}
