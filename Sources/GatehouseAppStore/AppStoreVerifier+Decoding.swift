import GatehouseWire

extension AppStoreVerifier {
    /// Verifies a signed transaction (`signedTransactionInfo`, or one from the App Store Server
    /// API or a device) and decodes it.
    public func verifyTransaction(jws: String) throws(AppStoreVerificationError) -> AppStoreTransaction {
        try AppStoreTransaction(verifiedPayload: verify(jws: jws).payload)
    }

    /// Verifies signed renewal info (`signedRenewalInfo`) and decodes it.
    public func verifyRenewalInfo(jws: String) throws(AppStoreVerificationError) -> AppStoreRenewalInfo {
        try AppStoreRenewalInfo(verifiedPayload: verify(jws: jws).payload)
    }

    /// Verifies a notification's `signedPayload` and decodes it, leaving the nested signed
    /// transaction and renewal info undecoded (see ``decodeNotification(signedPayloadBody:)``).
    public func verifyNotification(jws: String) throws(AppStoreVerificationError) -> AppStoreNotification {
        try AppStoreNotification(verifiedPayload: verify(jws: jws).payload)
    }

    /// Verifies and decodes a notification as Apple posts it, together with the signed
    /// transaction and renewal info it carries, each verified at its own `signedDate`.
    ///
    /// - Parameter body: The request body, `{"signedPayload":"<JWS>"}`, or the bare JWS.
    public func decodeNotification(signedPayloadBody body: [UInt8]) throws(AppStoreVerificationError)
        -> AppStoreVerifiedNotification
    {
        let signedPayload = try Self.signedPayload(inBody: body)
        let notification = try verifyNotification(jws: signedPayload)
        let transaction = try notification.signedTransactionInfo.map { (jws) throws(AppStoreVerificationError) in
            try verifyTransaction(jws: jws)
        }
        let renewalInfo = try notification.signedRenewalInfo.map { (jws) throws(AppStoreVerificationError) in
            try verifyRenewalInfo(jws: jws)
        }
        return AppStoreVerifiedNotification(
            notification: notification, transaction: transaction, renewalInfo: renewalInfo,
            signedPayload: signedPayload)
    }

    /// ``decodeNotification(signedPayloadBody:)`` for a body held as a string.
    public func decodeNotification(signedPayloadBody body: String) throws(AppStoreVerificationError)
        -> AppStoreVerifiedNotification
    {
        try decodeNotification(signedPayloadBody: Array(body.utf8))
    }

    /// Verifies and decodes a notification, then checks that it and everything it carries is
    /// for `app`. Every signature is checked before any app check, so a forged notification is
    /// always ``AppStoreVerificationError/Code/invalidSignature``, never `wrongApp`.
    public func decodeNotification(signedPayloadBody body: [UInt8], for app: AppStoreAppIdentity)
        throws(AppStoreVerificationError) -> AppStoreVerifiedNotification
    {
        let verified = try decodeNotification(signedPayloadBody: body)
        try app.check(verified)
        return verified
    }

    /// The JWS in a notification body: the `signedPayload` string of a JSON object, or the
    /// body itself (surrounding whitespace removed) when it does not start with `{`.
    static func signedPayload(inBody body: [UInt8]) throws(AppStoreVerificationError) -> String {
        guard body.count <= signedPayloadBodyBytesMax else {
            throw .invalidSignature("notification body longer than \(signedPayloadBodyBytesMax) bytes")
        }
        let trimmed = body.drop(while: isWhitespace).reversed().drop(while: isWhitespace).reversed()
        guard trimmed.first == UInt8(ascii: "{") else { return String(decoding: trimmed, as: UTF8.self) }
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(trimmed), maxDepth: 8)
        } catch {
            throw .invalidSignature("notification body is not JSON: \(error)")
        }
        guard let signedPayload = value.objectValue?["signedPayload"]?.stringValue else {
            throw .invalidSignature("notification body has no signedPayload string")
        }
        return signedPayload
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
            || byte == UInt8(ascii: "\t")
    }
}
