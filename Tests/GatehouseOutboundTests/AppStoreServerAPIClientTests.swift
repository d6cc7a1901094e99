import GatehouseAppStore
import GatehouseOutbound
import GatehouseTesting
import Testing

/// What the client fetches from (a fake of) Apple's API, and the token it proves itself with.
@Suite struct AppStoreServerAPIClientTests {
    @Test func historyIsCollectedAcrossPagesInOrder() async throws {
        try await withAPIRig { rig in
            let signed = rig.fake.addCustomer(firstTransactionID: 2_000_000_100, count: 5)
            let history = try await rig.client().transactionHistory(transactionId: "2000000103", environment: .sandbox)
            #expect(history == signed)
            // Three pages of two, each after the revision the last one gave, escaped.
            #expect(rig.fake.seen.map(\.path) == Array(repeating: "/inApps/v2/history/2000000103", count: 3))
            #expect(rig.fake.seen.map(\.query) == [nil, "revision=rev%2B2%2F%3D", "revision=rev%2B4%2F%3D"])
            #expect(rig.fake.seen.allSatisfy { $0.refusal == nil })
        }
    }

    @Test func aHistoryOfOnePageIsOneRequest() async throws {
        try await withAPIRig { rig in
            rig.fake.addCustomer(firstTransactionID: 7, count: 1)
            let history = try await rig.client().transactionHistory(transactionId: "7", environment: .production)
            #expect(history.count == 1)
            #expect(rig.fake.seen.count == 1)
        }
    }

    @Test func statusesAreEveryGroupsLastTransactions() async throws {
        try await withAPIRig { rig in
            let signed = rig.fake.addCustomer(firstTransactionID: 500, count: 3)
            let statuses = try await rig.client().subscriptionStatuses(transactionId: "501", environment: .sandbox)
            #expect(statuses.count == 1)
            let status = try #require(statuses.first)
            #expect(status.subscriptionGroupIdentifier == "21000000")
            #expect(status.originalTransactionId == "500")
            #expect(status.status == 1)
            #expect(status.signedTransactionInfo == signed[2])
            #expect(status.signedRenewalInfo != nil)
            #expect(rig.fake.seen.map(\.path) == ["/inApps/v1/subscriptions/501"])
        }
    }

    @Test func whatTheClientFetchesPassesTheVerifier() async throws {
        try await withAPIRig { rig in
            rig.fake.addCustomer(firstTransactionID: 900, count: 3)
            let client = try rig.client()
            let verifier = try AppStoreVerifier(rootCertificates: [rig.fake.chain.rootDER])
            let history = try await client.transactionHistory(transactionId: "900", environment: .sandbox)
            let transactions = try history.map { try verifier.verifyTransaction(jws: $0) }
            #expect(transactions.map(\.transactionId) == ["900", "901", "902"])
            #expect(transactions.allSatisfy { $0.originalTransactionId == "900" && $0.bundleId == FakeAppStoreAPI.bundleID })
            let status = try #require(try await client.subscriptionStatuses(transactionId: "902", environment: .sandbox).first)
            #expect(try verifier.verifyTransaction(jws: #require(status.signedTransactionInfo)).transactionId == "902")
            #expect(try verifier.verifyRenewalInfo(jws: #require(status.signedRenewalInfo)).originalTransactionId == "900")
        }
    }

    @Test func anUnknownTransactionIsNotFoundNotUnreachable() async throws {
        try await withAPIRig { rig in
            let client = try rig.client()
            let error = await apiError { () async throws(AppStoreServerAPIError) in
                try await client.transactionHistory(transactionId: "404", environment: .sandbox)
            }
            #expect(error?.code == .transactionNotFound, "\(String(describing: error))")
            #expect(error?.status == 404)
            #expect(error?.apiErrorCode == 4_040_010)
            #expect(rig.fake.seen.count == 1)
        }
    }

    @Test(arguments: ["", "12/../34", "1 2", "１２", "2000000103?x=1", String(repeating: "1", count: 65)])
    func aTransactionIdThatCannotBeOneIsRefusedUnsent(transactionId: String) async throws {
        try await withAPIRig { rig in
            let client = try rig.client()
            let history = await apiError { () async throws(AppStoreServerAPIError) in
                try await client.transactionHistory(transactionId: transactionId, environment: .sandbox)
            }
            let statuses = await apiError { () async throws(AppStoreServerAPIError) in
                try await client.subscriptionStatuses(transactionId: transactionId, environment: .sandbox)
            }
            #expect(history?.code == .invalidRequest)
            #expect(statuses?.code == .invalidRequest)
            #expect(rig.fake.seen.isEmpty)
        }
    }

    @Test func environmentsChooseApplesBaseURLUnlessOverridden() async throws {
        try await withAPIRig { rig in
            let apple = try rig.client(baseURL: nil)
            let direct = AppStoreServerAPIClient(key: apple.key, sender: RetryingSender(client: rig.http))
            #expect(direct.baseURL(for: .production) == "https://api.storekit.apple.com")
            #expect(direct.baseURL(for: .sandbox) == "https://api.storekit-sandbox.apple.com")
            #expect(direct.baseURL(for: .xcode) == nil)
            #expect(direct.baseURL(for: .localTesting) == nil)
            let overridden = try rig.client(baseURL: "http://127.0.0.1:9/")
            #expect(overridden.baseURL(for: .production) == "http://127.0.0.1:9")
            #expect(overridden.baseURL(for: .xcode) == "http://127.0.0.1:9")
        }
    }

    @Test func anEnvironmentAppleDoesNotServeIsRefusedUnsent() async throws {
        try await withAPIRig { rig in
            let client = AppStoreServerAPIClient(key: try rig.fake.apiKey(), sender: RetryingSender(client: rig.http))
            let error = await apiError { () async throws(AppStoreServerAPIError) in
                try await client.transactionHistory(transactionId: "1", environment: .xcode)
            }
            #expect(error?.code == .invalidRequest)
        }
    }

    @Test func aHistoryThatNeverEndsIsRefused() async throws {
        try await withAPIRig { rig in
            rig.fake.addCustomer(firstTransactionID: 1, count: 9)
            let sender = RetryingSender(client: rig.http, clock: rig.retryClock)
            let client = AppStoreServerAPIClient(
                key: try rig.fake.apiKey(), sender: sender,
                settings: .init(baseURLOverride: rig.fake.baseURL, historyPagesMax: 3),
                currentTimeMilliseconds: rig.wallClock.now)
            let error = await apiError { () async throws(AppStoreServerAPIError) in
                try await client.transactionHistory(transactionId: "1", environment: .sandbox)
            }
            #expect(error?.code == .invalidResponse)
            #expect(rig.fake.seen.count == 3)
        }
    }
}
