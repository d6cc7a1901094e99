import GatehouseHTTP
import GatehouseOutbound
import GatehouseStripe
import GatehouseTesting
import Testing

/// The fake of Stripe's create-Checkout-Session call the web purchase tests send to, on its own:
/// it takes the request ``StripeCheckoutRequest`` makes, refuses what Stripe would refuse, and
/// answers a retried idempotency key with the same session.
@Suite struct FakeStripeAPITests {
    static let request = StripeCheckoutRequest(
        priceID: StripeFixtures.priceID, mode: .subscription, successURL: "https://gatehouse.test/pay/success",
        cancelURL: "https://gatehouse.test/pay/cancel", clientReferenceID: "customer-42", metadata: ["app_user_id": "customer-42"])

    func withFake<T>(_ body: (FakeStripeAPI, OutboundHTTPClient) async throws -> T) async throws -> T {
        let fake = try FakeStripeAPI()
        let client = OutboundHTTPClient()
        defer { fake.stop() }
        do {
            let result = try await body(fake, client)
            await client.close()
            return result
        } catch {
            await client.close()
            throw error
        }
    }

    static func send(
        _ client: OutboundHTTPClient, to fake: FakeStripeAPI, key: String = StripeFixtures.secretKey,
        idempotencyKey: String = "checkout-1", body: [UInt8] = request.formBody(),
        headers: [(name: String, value: String)]? = nil
    ) async throws -> OutboundResponse {
        let sent = headers ?? StripeCheckoutRequest.headers(secretKey: key, idempotencyKey: idempotencyKey)
        return try await client.send(
            OutboundRequest(method: "POST", url: fake.baseURL + StripeCheckoutRequest.path, headers: HTTPHeaders(sent), body: body)
        ).get()
    }

    @Test func aRequestMadeByStripeCheckoutRequestGetsASession() async throws {
        let (response, seen, sessions) = try await withFake { fake, client in
            (try await Self.send(client, to: fake), fake.seen, fake.sessions)
        }
        #expect(response.status == 200)
        let answer = try StripeCheckoutAnswer.parse(status: response.status, body: response.body)
        #expect(answer.id.hasPrefix("cs_test_"))
        #expect(answer.url == "https://checkout.stripe.com/c/pay/\(answer.id)")
        let request = try #require(seen.first)
        #expect(seen.count == 1)
        #expect(request.passed)
        #expect(request.authorization == "Bearer \(StripeFixtures.secretKey)")
        #expect(request.stripeVersion == StripeAPIVersion.pinned)
        #expect(request.idempotencyKey == "checkout-1")
        #expect(request.field("line_items[0][price]") == StripeFixtures.priceID)
        #expect(request.field("subscription_data[metadata][app_user_id]") == "customer-42")
        #expect(sessions.map(\.id) == [answer.id])
        #expect(sessions.first?.clientReferenceID == "customer-42")
        #expect(sessions.first?.metadata == ["app_user_id": "customer-42"])
    }

    @Test func theBuyerReturnsToTheSuccessURLWithTheSessionsID() async throws {
        var request = Self.request
        request.successURL = "https://gatehouse.test/pay/success?session_id={CHECKOUT_SESSION_ID}&project=acme"
        let sessions = try await withFake { fake, client in
            _ = try await Self.send(client, to: fake, body: request.formBody())
            return fake.sessions
        }
        let session = try #require(sessions.first)
        #expect(session.returnURL == "https://gatehouse.test/pay/success?session_id=\(session.id)&project=acme")
    }

    @Test func aWrongOrMissingKeyIsRefusedWith401AsStripeDoes() async throws {
        let (wrong, missing, sessions) = try await withFake { fake, client in
            let wrong = try await Self.send(client, to: fake, key: "sk_test_51OtherAccountKey9876")
            let missing = try await Self.send(
                client, to: fake,
                headers: [("Stripe-Version", StripeAPIVersion.pinned), ("Content-Type", "application/x-www-form-urlencoded")])
            return (wrong, missing, fake.sessions)
        }
        #expect(wrong.status == 401)
        let error = #expect(throws: StripeAPIError.self) {
            try StripeCheckoutAnswer.parse(status: wrong.status, body: wrong.body)
        }
        #expect(error?.type == "invalid_request_error")
        #expect(error?.message == "Invalid API Key provided: sk_test_****9876")
        #expect(missing.status == 401)
        #expect(sessions.isEmpty)
    }

    @Test func aRetryWithTheSameIdempotencyKeyGetsTheSameSession() async throws {
        let (first, again, other, sessions) = try await withFake { fake, client in
            let first = try await Self.send(client, to: fake)
            let again = try await Self.send(client, to: fake)
            let other = try await Self.send(
                client, to: fake,
                body: StripeCheckoutRequest(
                    priceID: "price_other", mode: .payment, successURL: "https://a.test/s", cancelURL: "https://a.test/c"
                ).formBody())
            return (first, again, other, fake.sessions)
        }
        #expect(first.body == again.body)
        #expect(sessions.count == 1)
        #expect(other.status == 400)
        #expect(throws: StripeAPIError.self) { try StripeCheckoutAnswer.parse(status: other.status, body: other.body) }
    }

    @Test func whatStripeWouldRefuseIsRefusedNamingTheParameter() async throws {
        let bodies: [(String, String)] = [
            ("line_items[0][price]=p&line_items[0][quantity]=1&success_url=https%3A%2F%2Fa.test", "Missing required param: mode."),
            ("mode=subscription&line_items[0][quantity]=1&success_url=https%3A%2F%2Fa.test", "Missing required param: line_items[0][price]."),
            ("mode=subscription&line_items[0][price]=p&line_items[0][quantity]=1&success_url=https%3A%2F%2Fa.test&colour=red",
                "Received unknown parameter: colour"),
            ("mode=payment&line_items[0][price]=p&line_items[0][quantity]=1&success_url=https%3A%2F%2Fa.test&subscription_data[metadata][a]=b",
                "You can not pass `subscription_data` in `payment` mode."),
        ]
        let answers = try await withFake { fake, client in
            var answers: [(Int, String?)] = []
            for (index, (body, _)) in bodies.enumerated() {
                let response = try await Self.send(client, to: fake, idempotencyKey: "k\(index)", body: Array(body.utf8))
                let message = (try? StripeCheckoutAnswer.parse(status: response.status, body: response.body)).map(\.id)
                answers.append((response.status, message ?? fake.seen.last?.refusal))
            }
            return answers
        }
        for ((status, refusal), (_, message)) in zip(answers, bodies) {
            #expect(status == 400)
            #expect(refusal == message)
        }
    }

    @Test func aWrongAPIVersionIsRefused() async throws {
        let response = try await withFake { fake, client in
            try await Self.send(
                client, to: fake,
                headers: [
                    ("Authorization", "Bearer \(StripeFixtures.secretKey)"), ("Stripe-Version", "2024-06-20"),
                    ("Content-Type", "application/x-www-form-urlencoded"),
                ])
        }
        #expect(response.status == 400)
    }

    @Test func aScriptedFaultAnswersStripesErrorOnce() async throws {
        let (failed, next) = try await withFake { fake, client in
            fake.failNext(.stripeError(status: 500, type: "api_error", message: "An unknown error occurred"))
            return (try await Self.send(client, to: fake), try await Self.send(client, to: fake))
        }
        let error = #expect(throws: StripeAPIError.self) {
            try StripeCheckoutAnswer.parse(status: failed.status, body: failed.body)
        }
        #expect(error?.isRetryable == true)
        #expect(error?.message == "An unknown error occurred")
        #expect(next.status == 200)
    }
}
