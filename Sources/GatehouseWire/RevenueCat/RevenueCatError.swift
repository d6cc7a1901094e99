/// RevenueCat's backend error codes that Gatehouse answers (HTTP.md, "Answers"), each with its
/// HTTP status. The status class is what the SDKs act on: a 4xx finishes the store transaction
/// it answers, a 5xx keeps it to post again later.
public enum RevenueCatErrorCode: Int, Sendable, CaseIterable {
    /// A store the project has not enabled.
    case invalidPlatform = 7000
    /// A purchase that stays with another profile (`restore: keep`).
    case cannotTransferPurchase = 7102
    /// A signed transaction that fails verification or is for another app, or a StoreKit 1
    /// receipt.
    case invalidReceipt = 7103
    /// Anything without a code of its own; its status is the Gatehouse error's.
    case internalServerError = 7110
    case emptyAppUserID = 7220
    /// A missing, unknown or wrong key.
    case invalidAPIKey = 7225
    /// A key whose role may not do it.
    case forbidden = 7243
    /// `token_in_use`.
    case couldNotCreateAlias = 7255
    case invalidAppUserID = 7256
    /// Carries `attribute_errors`.
    case invalidSubscriberAttributes = 7263
    case invalidWebRedemptionToken = 7849
    case purchaseBelongsToOtherUser = 7852
    /// Carries `purchase_redemption_error_info.obfuscated_email` when the buyer gave an email.
    case expiredWebRedemptionToken = 7853

    /// The HTTP status HTTP.md gives the code; for ``internalServerError`` the status of an
    /// internal error, which callers replace with the Gatehouse error's own.
    public var status: Int {
        switch self {
        case .invalidAPIKey: 401
        case .forbidden: 403
        case .internalServerError: 500
        case .invalidPlatform, .cannotTransferPurchase, .invalidReceipt, .emptyAppUserID, .couldNotCreateAlias,
            .invalidAppUserID, .invalidSubscriberAttributes, .invalidWebRedemptionToken, .purchaseBelongsToOtherUser,
            .expiredWebRedemptionToken:
            400
        }
    }
}

/// An error answer of the RevenueCat-compatible paths: its status and the body
/// `{"code": <int>, "message": "…"}`, with `attribute_errors: [{key_name, message}]` and
/// `purchase_redemption_error_info: {obfuscated_email}` when they apply.
public struct RevenueCatError: Error, Sendable, Equatable {
    public struct AttributeError: Sendable, Equatable {
        public var keyName: String
        public var message: String

        public init(keyName: String, message: String) {
            self.keyName = keyName
            self.message = message
        }
    }

    /// What `read_only` and `overloaded` answer (with `Retry-After`): a 5xx the SDKs retry.
    public static let unavailableStatus = 529

    public var code: Int
    public var status: Int
    public var message: String
    public var attributeErrors: [AttributeError]
    public var obfuscatedEmail: String?

    public init(code: Int, status: Int, message: String, attributeErrors: [AttributeError] = [], obfuscatedEmail: String? = nil) {
        self.code = code
        self.status = status
        self.message = message
        self.attributeErrors = attributeErrors
        self.obfuscatedEmail = obfuscatedEmail
    }

    /// `status` defaults to the code's.
    public init(
        _ code: RevenueCatErrorCode, status: Int? = nil, message: String, attributeErrors: [AttributeError] = [],
        obfuscatedEmail: String? = nil
    ) {
        self.init(code: code.rawValue, status: status ?? code.status, message: message, attributeErrors: attributeErrors,
                  obfuscatedEmail: obfuscatedEmail)
    }

    /// The body. `attribute_errors` is written when there are any, and always for
    /// ``RevenueCatErrorCode/invalidSubscriberAttributes``.
    public var json: JSONObject {
        var body: JSONObject = ["code": .int(Int64(code)), "message": .string(message)]
        if !attributeErrors.isEmpty || code == RevenueCatErrorCode.invalidSubscriberAttributes.rawValue {
            body.append("attribute_errors", .array(attributeErrors.map { ["key_name": .string($0.keyName), "message": .string($0.message)] }))
        }
        if let obfuscatedEmail {
            body.append("purchase_redemption_error_info", ["obfuscated_email": .string(obfuscatedEmail)])
        }
        return body
    }
}
