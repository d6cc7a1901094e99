import GatehouseStripe
import Testing

/// The create-Checkout-Session call's body and headers, and the reading of Stripe's answer.
@Suite struct StripeCheckoutTests {
    static let request = StripeCheckoutRequest(
        priceID: "price_1TestMonthly", mode: .subscription,
        successURL: "https://gatehouse.test/pay/success?session_id={CHECKOUT_SESSION_ID}",
        cancelURL: "https://gatehouse.test/pay/cancel", clientReferenceID: "customer 42/ü", customerEmail: "a+b@example.com",
        metadata: ["offering": "default~*", "app_user_id": "customer 42/ü"])

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// The expected bodies are what stripe-python writes for the same parameters
    /// (`urlencode`, then its brackets put back).
    @Test func aSubscriptionRequestIsEncodedAsStripesLibrariesEncodeIt() {
        #expect(
            Self.text(Self.request.formBody())
                == "mode=subscription&line_items[0][price]=price_1TestMonthly&line_items[0][quantity]=1"
                + "&success_url=https%3A%2F%2Fgatehouse.test%2Fpay%2Fsuccess%3Fsession_id%3D%7BCHECKOUT_SESSION_ID%7D"
                + "&cancel_url=https%3A%2F%2Fgatehouse.test%2Fpay%2Fcancel&client_reference_id=customer+42%2F%C3%BC"
                + "&customer_email=a%2Bb%40example.com&metadata[app_user_id]=customer+42%2F%C3%BC"
                + "&metadata[offering]=default~%2A&subscription_data[metadata][app_user_id]=customer+42%2F%C3%BC"
                + "&subscription_data[metadata][offering]=default~%2A")
    }

    @Test func aPaymentRequestCopiesItsMetadataToThePaymentIntent() {
        let request = StripeCheckoutRequest(
            priceID: "price_once", mode: .payment, successURL: "https://a.test/s", cancelURL: "https://a.test/c",
            metadata: ["app_user_id": "u1"])
        #expect(
            Self.text(request.formBody())
                == "mode=payment&line_items[0][price]=price_once&line_items[0][quantity]=1&success_url=https%3A%2F%2Fa.test%2Fs"
                + "&cancel_url=https%3A%2F%2Fa.test%2Fc&metadata[app_user_id]=u1&payment_intent_data[metadata][app_user_id]=u1")
    }

    @Test func optionalFieldsThatAreAbsentAreNotSent() {
        let request = StripeCheckoutRequest(
            priceID: "p", mode: .subscription, successURL: "https://a.test/s", cancelURL: "https://a.test/c")
        #expect(request.formFields.map(\.key) == ["mode", "line_items[0][price]", "line_items[0][quantity]", "success_url", "cancel_url"])
        #expect(request.path == "/v1/checkout/sessions")
    }

    @Test func bracketsInAKeyStayAndInAValueAreEscaped() {
        #expect(Self.text(StripeForm.encode([("metadata[a b]", "[x]&=")])) == "metadata[a+b]=%5Bx%5D%26%3D")
    }

    @Test func aFormBodyDecodesToWhatWasEncoded() throws {
        let decoded = try #require(StripeForm.decode(Self.request.formBody()))
        #expect(decoded.map(\.key) == Self.request.formFields.map(\.key))
        #expect(decoded.map(\.value) == Self.request.formFields.map(\.value))
    }

    @Test(arguments: ["a=%", "a=%4", "a=%zz", "a=%FF"])
    func aBrokenFormBodyDoesNotDecode(_ body: String) {
        #expect(StripeForm.decode(Array(body.utf8)) == nil)
    }

    @Test func theHeadersNameTheKeyThePinnedVersionAndTheIdempotencyKey() {
        let headers = StripeCheckoutRequest.headers(secretKey: "sk_test_1", idempotencyKey: "checkout-7")
        #expect(headers.map(\.name) == ["Authorization", "Stripe-Version", "Idempotency-Key", "Content-Type"])
        #expect(headers.map(\.value) == ["Bearer sk_test_1", "2026-06-24.dahlia", "checkout-7", "application/x-www-form-urlencoded"])
    }

    // MARK: The answer

    static func parse(_ status: Int, _ body: String) throws(StripeAPIError) -> StripeCheckoutAnswer {
        try StripeCheckoutAnswer.parse(status: status, body: Array(body.utf8))
    }

    static func error(_ status: Int, _ body: String) -> StripeAPIError? {
        do {
            let answer = try parse(status, body)
            Issue.record("parsed: \(answer)")
            return nil
        } catch {
            return error
        }
    }

    @Test func aCreatedSessionGivesItsIDAndURL() throws {
        let answer = try Self.parse(
            200,
            #"{"id":"cs_test_a1","object":"checkout.session","mode":"subscription","status":"open","url":"https://checkout.stripe.com/c/pay/cs_test_a1"}"#
        )
        #expect(answer == StripeCheckoutAnswer(id: "cs_test_a1", url: "https://checkout.stripe.com/c/pay/cs_test_a1"))
    }

    @Test func stripesErrorBodyIsSurfacedWithItsMessage() {
        let error = Self.error(
            401, #"{"error":{"code":"api_key_invalid","message":"Invalid API Key provided: sk_test_****1234","type":"invalid_request_error"}}"#)
        #expect(
            error
                == StripeAPIError(
                    status: 401, type: "invalid_request_error", code: "api_key_invalid",
                    message: "Invalid API Key provided: sk_test_****1234"))
        #expect(error?.isRetryable == false)
        #expect(error?.description == "Stripe answered 401 (invalid_request_error/api_key_invalid): Invalid API Key provided: sk_test_****1234")
    }

    @Test func aServerErrorOrRateLimitIsRetryable() {
        #expect(Self.error(500, #"{"error":{"message":"An unknown error occurred","type":"api_error"}}"#)?.isRetryable == true)
        #expect(Self.error(429, #"{"error":{"message":"Too many requests","type":"invalid_request_error"}}"#)?.isRetryable == true)
        #expect(Self.error(502, "<html>bad gateway</html>") == StripeAPIError(status: 502, message: "the answer is not a Stripe error"))
    }

    @Test func aMalformedSuccessIsRefused() {
        let cases: [(String, String)] = [
            ("", "the answer is not a JSON object"),
            ("[]", "the answer is not a JSON object"),
            (#"{"id":"cs_1","url":"https://c.test/x"}"#, "the answer is not a checkout.session"),
            (#"{"object":"checkout.session","url":"https://c.test/x"}"#, "the answer has no session id"),
            (#"{"object":"checkout.session","id":"","url":"https://c.test/x"}"#, "the answer has no session id"),
            (#"{"object":"checkout.session","id":"cs_1","url":null}"#, "the answer has no https url"),
            (#"{"object":"checkout.session","id":"cs_1","url":"http://c.test/x"}"#, "the answer has no https url"),
        ]
        for (body, message) in cases {
            #expect(Self.error(200, body) == StripeAPIError(status: 200, message: message), "\(body)")
        }
    }
}
