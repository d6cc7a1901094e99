import GatehouseAppStore
import GatehouseOutbound
import GatehouseTesting
import Testing

/// Apple failing now and then: each failure worth retrying is retried after a wait and the
/// request then succeeds; when the retries run out, or the failure is not worth retrying, the
/// error says what happened.
@Suite struct AppStoreServerAPIFailureTests {
    static let passingFaults: [FakeAppStoreAPI.Fault] = [
        .status(500), .status(503), .tooManyRequests(retryAfterSeconds: 2), .dropConnection,
        .slow(.seconds(5)), .appleError(status: 404, errorCode: 4_040_002),
    ]

    @Test(arguments: passingFaults)
    func aPassingFailureIsRetriedAndTheRequestSucceeds(fault: FakeAppStoreAPI.Fault) async throws {
        try await withAPIRig { rig in
            let signed = rig.fake.addCustomer(firstTransactionID: 10, count: 1)
            rig.fake.failNext(fault)
            let client = try rig.client(requestTimeout: .milliseconds(300))
            let history = try await client.transactionHistory(transactionId: "10", environment: .sandbox)
            #expect(history == signed)
            #expect(rig.fake.seen.count == 2)
            #expect(rig.retryClock.sleeps.count == 1)
        }
    }

    @Test func retryAfterIsWaitedFor() async throws {
        try await withAPIRig { rig in
            rig.fake.addCustomer(firstTransactionID: 10, count: 1)
            rig.fake.failNext(.tooManyRequests(retryAfterSeconds: 3), .tooManyRequests(retryAfterSeconds: 600))
            _ = try await rig.client().subscriptionStatuses(transactionId: "10", environment: .sandbox)
            // The second is cut to the policy's longest Retry-After.
            #expect(rig.retryClock.sleeps == [.seconds(3), .seconds(10)])
        }
    }

    @Test func waitsGrowBetweenAttempts() async throws {
        try await withAPIRig { rig in
            rig.fake.addCustomer(firstTransactionID: 10, count: 1)
            rig.fake.failNext(.status(500), .status(500), .status(500))
            let policy = RetryPolicy(attemptsMax: 4, initialDelay: .milliseconds(100), delayMax: .seconds(1))
            _ = try await rig.client(policy: policy).transactionHistory(transactionId: "10", environment: .sandbox)
            let sleeps = rig.retryClock.sleeps
            #expect(sleeps.count == 3)
            for (index, sleep) in sleeps.enumerated() {
                let step = Duration.milliseconds(100) * (1 << index)
                #expect(sleep >= step / 2 && sleep <= step, "wait \(index): \(sleep)")
            }
        }
    }

    @Test func whenTheRetriesRunOutAppleIsUnavailable() async throws {
        try await withAPIRig { rig in
            rig.fake.addCustomer(firstTransactionID: 10, count: 1)
            rig.fake.failNext(.status(500), .status(500), .status(500), .status(500))
            let client = try rig.client(policy: RetryPolicy(attemptsMax: 4))
            let error = await apiError { () async throws(AppStoreServerAPIError) in
                try await client.transactionHistory(transactionId: "10", environment: .sandbox)
            }
            #expect(error?.code == .unavailable)
            #expect(error?.status == 500)
            #expect(error?.apiErrorCode == 5_000_000)
            #expect(error?.message.contains("HTTP 500") == true)
            #expect(rig.fake.seen.count == 4)
            #expect(rig.retryClock.sleeps.count == 3)
        }
    }

    @Test func anUnreachableAPICannotConnectAfterItsRetries() async throws {
        try await withAPIRig { rig in
            let client = try rig.client(policy: RetryPolicy(attemptsMax: 3), baseURL: "http://127.0.0.1:\(try closedPort())")
            let error = await apiError { () async throws(AppStoreServerAPIError) in
                try await client.transactionHistory(transactionId: "10", environment: .sandbox)
            }
            #expect(error?.code == .unavailable)
            #expect(error?.underlying?.code == .cannotConnect)
            #expect(error?.status == nil)
            #expect(rig.retryClock.sleeps.count == 2)
        }
    }

    @Test func anAnswerPastTheTimeoutEveryTimeIsUnavailable() async throws {
        try await withAPIRig { rig in
            rig.fake.addCustomer(firstTransactionID: 10, count: 1)
            rig.fake.failNext(.slow(.seconds(5)), .slow(.seconds(5)))
            let client = try rig.client(policy: RetryPolicy(attemptsMax: 2), requestTimeout: .milliseconds(200))
            let error = await apiError { () async throws(AppStoreServerAPIError) in
                try await client.transactionHistory(transactionId: "10", environment: .sandbox)
            }
            #expect(error?.code == .unavailable)
            #expect(error?.underlying?.code == .timedOut)
            #expect(rig.fake.seen.count == 2)
        }
    }

    @Test func anAnswerOverTheLimitIsInvalidAndNotRetried() async throws {
        try await withAPIRig { rig in
            rig.fake.addCustomer(firstTransactionID: 10, count: 1)
            rig.fake.failNext(.oversizedBody(bytes: 5000))
            let client = try rig.client(responseBytesMax: 4096)
            let error = await apiError { () async throws(AppStoreServerAPIError) in
                try await client.transactionHistory(transactionId: "10", environment: .sandbox)
            }
            #expect(error?.code == .invalidResponse)
            #expect(error?.underlying?.code == .responseTooLarge)
            #expect(rig.fake.seen.count == 1)
        }
    }

    @Test func aRefusalOtherThanNotFoundIsRejectedAndNotRetried() async throws {
        try await withAPIRig { rig in
            rig.fake.addCustomer(firstTransactionID: 10, count: 1)
            rig.fake.failNext(.appleError(status: 400, errorCode: 4_000_006))
            let client = try rig.client()
            let error = await apiError { () async throws(AppStoreServerAPIError) in
                try await client.subscriptionStatuses(transactionId: "10", environment: .sandbox)
            }
            #expect(error?.code == .rejected)
            #expect(error?.apiErrorCode == 4_000_006)
            #expect(rig.fake.seen.count == 1)
        }
    }

    @Test func aSuccessThatIsNotTheDocumentedShapeIsInvalid() async throws {
        try await withAPIRig { rig in
            rig.fake.addCustomer(firstTransactionID: 10, count: 1)
            rig.fake.failNext(.oversizedBody(bytes: 10))  // a 200 whose body is only spaces
            let client = try rig.client()
            let error = await apiError { () async throws(AppStoreServerAPIError) in
                try await client.transactionHistory(transactionId: "10", environment: .sandbox)
            }
            #expect(error?.code == .invalidResponse)
            #expect(error?.underlying == nil)
        }
    }
}
