import GatehouseCore
import GatehouseWire

/// Why a RevenueCat REST request was refused: RevenueCat's error (its backend code, the status
/// class the SDKs act on, the body) and the Gatehouse code it comes from, which the request
/// metrics count.
struct RevenueCatRefusal: Error, Sendable {
    var error: RevenueCatError
    var code: ErrorCode

    init(_ backendCode: RevenueCatErrorCode, status: Int? = nil, _ message: String, code: ErrorCode = .badRequest) {
        error = RevenueCatError(backendCode, status: status, message: message)
        self.code = code
    }

    var status: Int {
        get { error.status }
        set { error.status = newValue }
    }

    /// An op's error as HTTP.md's table maps it ("Answers").
    init(_ refusal: GatehouseError) {
        let (backendCode, status) = Self.mapping(refusal)
        self.init(backendCode, status: status, refusal.message, code: refusal.code)
        if backendCode == .invalidSubscriberAttributes, let key = Self.attributeKey(refusal) {
            error.attributeErrors = [RevenueCatError.AttributeError(keyName: key, message: refusal.message)]
        }
        for case .obfuscatedEmail(let address) in refusal.details { error.obfuscatedEmail = address }
    }

    private static func mapping(_ error: GatehouseError) -> (code: RevenueCatErrorCode, status: Int?) {
        if error == TestStore.notEnabled(TestStore.appStoreName) || error == TestStore.notEnabled(TestStore.name) {
            return (.invalidPlatform, nil)
        }
        switch error.code {
        case .unauthenticated, .unauthorized: return (.invalidAPIKey, nil)
        case .forbidden: return (.forbidden, nil)
        case .invalidCustomerUserID: return (.invalidAppUserID, nil)
        case .invalidSignature, .wrongApp: return (.invalidReceipt, nil)
        case .ownedByOther: return (.cannotTransferPurchase, nil)
        case .tokenInUse: return (.couldNotCreateAlias, nil)
        case .invalidToken: return (.invalidWebRedemptionToken, nil)
        case .purchaseBelongsToOtherUser: return (.purchaseBelongsToOtherUser, nil)
        case .expired: return (.expiredWebRedemptionToken, nil)
        case .readOnly, .overloaded: return (.internalServerError, RevenueCatError.unavailableStatus)
        case .insufficientFunds: return (.internalServerError, 422)
        case .badRequest where attributeKey(error) != nil: return (.invalidSubscriberAttributes, nil)
        default: return (.internalServerError, HTTPAnswers.status(for: error.code))
        }
    }

    /// The attribute a `bad_request` names (`attributes.<key>: …`), if it names one.
    private static func attributeKey(_ error: GatehouseError) -> String? {
        guard error.code == .badRequest, error.message.hasPrefix("attributes.") else { return nil }
        let named = error.message.dropFirst("attributes.".count)
        guard let colon = named.firstIndex(of: ":"), named[colon...].hasPrefix(": ") else { return nil }
        return String(named[..<colon])
    }
}
