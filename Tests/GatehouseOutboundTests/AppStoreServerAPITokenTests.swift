import GatehouseAppStore
import GatehouseOutbound
import GatehouseTesting
import GatehouseWire
import Testing

/// The token the client sends: checked by the fake as Apple checks it, reused while it has time
/// left, signed anew before it runs out.
@Suite struct AppStoreServerAPITokenTests {
    /// The token the client sent for one history request.
    func sentToken(_ rig: AppStoreAPIRig, _ client: AppStoreServerAPIClient) async throws -> String? {
        _ = try await client.transactionHistory(transactionId: "10", environment: .sandbox)
        return rig.fake.seen.last?.token
    }

    @Test func aTokenIsReusedUntilItNearsItsEndThenSignedAnew() async throws {
        try await withAPIRig { rig in
            rig.fake.addCustomer(firstTransactionID: 10, count: 1)
            let client = try rig.client()
            let first = try await sentToken(rig, client)
            rig.wallClock.advance(seconds: 10 * 60)
            let reused = try await sentToken(rig, client)
            rig.wallClock.advance(seconds: 6 * 60)
            let renewed = try await sentToken(rig, client)
            #expect(first != nil && reused == first)
            #expect(renewed != first)
            let claims = try #require(renewed.flatMap(TestAPIKey.decode)?.claims)
            #expect(claims["iat"] == .int(rig.wallClock.now() / 1000))
            #expect(claims["exp"] == .int(rig.wallClock.now() / 1000 + 20 * 60))
            #expect(rig.fake.seen.allSatisfy { $0.refusal == nil })
        }
    }

    @Test func aClockSetBackBeforeTheTokensIssueSignsAnew() async throws {
        try await withAPIRig { rig in
            rig.fake.addCustomer(firstTransactionID: 10, count: 1)
            let client = try rig.client()
            rig.wallClock.advance(seconds: 120)
            let first = try await sentToken(rig, client)
            rig.wallClock.advance(seconds: -120)
            let second = try await sentToken(rig, client)
            #expect(second != first)
            #expect(rig.fake.seen.allSatisfy { $0.refusal == nil })
        }
    }

    @Test(arguments: [
        ("other-issuer", FakeAppStoreAPI.keyID, FakeAppStoreAPI.bundleID, "iss is not the issuer"),
        (FakeAppStoreAPI.issuerID, "OTHERKEY", FakeAppStoreAPI.bundleID, "kid is not the key's id"),
        (FakeAppStoreAPI.issuerID, FakeAppStoreAPI.keyID, "com.example.other", "bid is not the app"),
    ])
    func wrongCredentialsAreUnauthorizedAndNotRetried(issuerID: String, keyID: String, bundleID: String, refusal: String)
        async throws
    {
        try await withAPIRig { rig in
            rig.fake.addCustomer(firstTransactionID: 10, count: 1)
            let key = try rig.fake.apiKey(issuerID: issuerID, keyID: keyID, bundleID: bundleID)
            let client = try rig.client(key: key)
            let error = await apiError { () async throws(AppStoreServerAPIError) in
                try await client.transactionHistory(transactionId: "10", environment: .sandbox)
            }
            #expect(error?.code == .unauthorized, "\(String(describing: error))")
            #expect(error?.status == 401)
            #expect(rig.fake.seen.map(\.refusal) == [refusal])
            #expect(rig.retryClock.sleeps.isEmpty)
        }
    }

    @Test func aTokenSignedByAnotherKeyIsUnauthorized() async throws {
        try await withAPIRig { rig in
            rig.fake.addCustomer(firstTransactionID: 10, count: 1)
            let stranger = try AppStoreServerAPIKey(
                issuerID: FakeAppStoreAPI.issuerID, keyID: FakeAppStoreAPI.keyID, privateKeyPEM: TestAPIKey().pem,
                bundleID: FakeAppStoreAPI.bundleID)
            let client = try rig.client(key: stranger)
            let error = await apiError { () async throws(AppStoreServerAPIError) in
                try await client.subscriptionStatuses(transactionId: "10", environment: .sandbox)
            }
            #expect(error?.code == .unauthorized)
            #expect(rig.fake.seen.map(\.refusal) == ["signature does not verify"])
        }
    }
}
