import GatehouseWire
import Testing

// HTTP.md, "Answers": the error body and the status of each RevenueCat code.

@Suite("RevenueCat errors")
struct RevenueCatErrorTests {
    @Test func eachCodeHasTheStatusHTTPmdGivesIt() {
        let statuses = Dictionary(uniqueKeysWithValues: RevenueCatErrorCode.allCases.map { ($0.rawValue, $0.status) })
        #expect(statuses == [
            7225: 401, 7243: 403, 7220: 400, 7256: 400, 7103: 400, 7102: 400, 7000: 400, 7263: 400, 7255: 400, 7849: 400,
            7852: 400, 7853: 400, 7110: 500,
        ])
    }

    @Test func theBodyIsTheCodeAndTheMessage() {
        let error = RevenueCatError(.invalidAPIKey, message: "Invalid API key")
        #expect(error.status == 401)
        #expect(error.json == ["code": 7225, "message": "Invalid API key"])
        #expect(JSONWriter.string(.object(error.json)) == #"{"code":7225,"message":"Invalid API key"}"#)
    }

    @Test func anErrorWithoutACodeOfItsOwnTakesTheStatusItIsGiven() {
        let error = RevenueCatError(.internalServerError, status: 404, message: "no such profile")
        #expect(error.code == 7110)
        #expect(error.status == 404)
        #expect(RevenueCatError(code: 7110, status: RevenueCatError.unavailableStatus, message: "read only").status == 529)
    }

    @Test func invalidAttributesListEachAttributesError() {
        let error = RevenueCatError(
            .invalidSubscriberAttributes, message: "Some subscriber attributes keys were unable to be saved.",
            attributeErrors: [RevenueCatError.AttributeError(keyName: "$email", message: "too long")])
        #expect(error.json == [
            "code": 7263, "message": "Some subscriber attributes keys were unable to be saved.",
            "attribute_errors": [["key_name": "$email", "message": "too long"]],
        ])
        #expect(RevenueCatError(.invalidSubscriberAttributes, message: "m").json["attribute_errors"] == [])
        #expect(RevenueCatError(.invalidAPIKey, message: "m").json["attribute_errors"] == nil)
    }

    @Test func anExpiredRedemptionCarriesTheObfuscatedEmail() {
        let error = RevenueCatError(.expiredWebRedemptionToken, message: "expired", obfuscatedEmail: "t***@e*****e.com")
        #expect(error.json == [
            "code": 7853, "message": "expired", "purchase_redemption_error_info": ["obfuscated_email": "t***@e*****e.com"],
        ])
    }

    @Test func theIOSSDKReadsTheBody() throws {
        let error = RevenueCatError(
            .invalidSubscriberAttributes, message: "bad", attributeErrors: [.init(keyName: "$email", message: "too long")],
            obfuscatedEmail: "t***@e*****e.com")
        let decoded = try IOSDecoders.decode(IOSErrorResponse.self, JSONWriter.serialize(.object(error.json)))
        #expect(decoded.code == 7263)
        #expect(decoded.message == "bad")
        #expect(decoded.attributeErrors?.map(\.keyName) == ["$email"])
        #expect(decoded.attributeErrors?.map(\.message) == ["too long"])
        #expect(decoded.purchaseRedemptionErrorInfo?.obfuscatedEmail == "t***@e*****e.com")
    }
}
