import GatehouseAppStore
import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// `POST /v1/stores/app-store/{project}` (HTTP.md, "Store notifications"): Apple's body runs
/// what `store.notify` runs; a 200 goes out only once the change is durable, a duplicate is a
/// 200 too, and nothing unverifiable changes anything. Notifications are signed by the test chain.
@Suite struct HTTPAppStore {
    typealias A = AppStoreFixture

    static func post(_ a: A, _ signedPayload: String, project: String = "acme", client: TestHTTPClient? = nil) async throws
        -> (status: Int, body: JSONObject, response: HTTPParsedResponse)
    {
        let body = JSONWriter.serialize(.object(["signedPayload": .string(signedPayload)]))
        let client = try client ?? HTTPListener.connect(a.server)
        let response = try await client.request("POST", "/v1/stores/app-store/\(project)", body: body)
        return (response.status, try HTTPListener.json(response), response)
    }

    static func subscribed(_ a: A, _ uuid: String = "n1", original: String = "7000000001", token: String) -> String {
        a.notification(uuid, "SUBSCRIBED", "INITIAL_BUY", transaction: a.transaction(original, token: token))
    }

    @Test func aNotificationIsAppliedAndItsDuplicateIs200NotApplied() async throws {
        try await A.run { a in
            let owner = try await a.f.create()
            let notification = Self.subscribed(a, token: owner.token)
            let applied = try await Self.post(a, notification)
            #expect(applied.status == 200)
            #expect(applied.body == ["applied": true])
            #expect(try await a.balance(owner.id) == 100, "the line sees what HTTP applied")
            let duplicate = try await Self.post(a, notification)
            #expect(duplicate.status == 200, "Apple stops retrying")
            #expect(duplicate.body == ["applied": false])
            #expect(try await a.balance(owner.id) == 100)
            #expect(try await a.eventTypes(after: 0) == ["INITIAL_PURCHASE"])
        }
    }

    @Test func theBodyMayBeTheLineOpsAnswerByteForByteOnlyInEffect() async throws {
        // The same notification through the line op and then HTTP: HTTP sees it as a duplicate.
        try await A.run { a in
            let owner = try await a.f.create()
            let notification = Self.subscribed(a, token: owner.token)
            try await a.notifyApplied(notification)
            #expect(try await Self.post(a, notification).body == ["applied": false])
        }
    }

    @Test func aTamperedNotificationIs400AndChangesNothing() async throws {
        try await A.run { a in
            let owner = try await a.f.create()
            let good = Self.subscribed(a, token: owner.token)
            var parts = good.split(separator: ".").map(String.init)
            // Another notification's payload under this one's signature.
            parts[1] = String(a.notification("n2", "REFUND", transaction: a.transaction("7000000001")).split(separator: ".")[1])
            let tampered = try await Self.post(a, parts.joined(separator: "."))
            #expect(tampered.status == 400)
            #expect(tampered.body.object("error")?.string("code") == "invalid_signature")
            #expect(try await a.balance(owner.id) == 0)
            #expect(try await a.eventTypes(after: 0) == [])
        }
    }

    @Test func anotherAppsNotificationIs400WrongApp() async throws {
        try await A.run { a in
            let owner = try await a.f.create()
            let other = a.notification("n1", "SUBSCRIBED", "INITIAL_BUY",
                                       transaction: a.transaction("7000000001", token: owner.token, bundle: "com.other.app"),
                                       bundle: "com.other.app")
            let refused = try await Self.post(a, other)
            #expect(refused.status == 400)
            #expect(refused.body.object("error")?.string("code") == "wrong_app")
            #expect(try await a.eventTypes(after: 0) == [])
        }
    }

    @Test func malformedBodiesAre400() async throws {
        try await A.run { a in
            let client = try HTTPListener.connect(a.server)
            for body in ["", "not json", "[1,2]", #"{"signedPayload":7}"#, #"{"other":"x"}"#, #"{"signedPayload":"a.b.c"}"#] {
                let response = try await client.request("POST", "/v1/stores/app-store/acme", body: body)
                #expect(response.status == 400, "\(body)")
                let code = try HTTPListener.json(response).object("error")?.string("code")
                #expect(code == "bad_request" || code == "invalid_signature", "\(body): \(code ?? "none")")
            }
            #expect(try await a.eventTypes(after: 0) == [])
        }
    }

    @Test func anUnknownProjectAndAStoreNotEnabledAre404() async throws {
        try await A.run { a in
            let owner = try await a.f.create()
            let unknownProject = try await Self.post(a, Self.subscribed(a, token: owner.token), project: "nobody")
            #expect(unknownProject.status == 404)
            #expect(unknownProject.body.object("error")?.string("code") == "not_found")
            let badName = try await Self.post(a, Self.subscribed(a, token: owner.token), project: "..%2F..")
            #expect(badName.status == 404)

            try await a.f.putConfig(A.config(appStore: false))
            let disabled = try await Self.post(a, Self.subscribed(a, token: owner.token))
            #expect(disabled.status == 404)
            #expect(disabled.body.object("error")?.string("code") == "not_found")
            #expect(try await a.eventTypes(after: 0) == [])
        }
    }

    @Test func aNotificationWithoutATransactionIsRecordedNot404() async throws {
        // The App Store's notifications carry their transaction, so a purchase the server never
        // saw is created from it; one without (renewal info alone, `TEST`) is only recorded.
        try await A.run { a in
            let renewalOnly = a.notification("n9", "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", renewalInfo: a.renewalInfo("7998"))
            let first = try await Self.post(a, renewalOnly)
            let again = try await Self.post(a, renewalOnly)
            #expect(first.body == ["applied": true])
            #expect(again.body == ["applied": false])
            #expect(try await a.eventTypes(after: 0) == [])
        }
    }

    @Test func aKeyIsNeverAcceptedInPlaceOfTheSignature() async throws {
        try await A.run { a in
            let client = try HTTPListener.connect(a.server)
            let response = try await client.request(
                "POST", "/v1/stores/app-store/acme", headers: [("Authorization", "Bearer \(a.f.keys.secretKey)")],
                body: #"{"signedPayload":"x"}"#
            )
            #expect(response.status == 400)
            #expect(try await a.eventTypes(after: 0) == [])
        }
    }

    @Test func the200WaitsForTheChangeToBeDurable() async throws {
        let disk = FaultyFileSystem()
        try await A.run(configure: { $0.fileSystem = disk }) { a in
            defer { disk.releaseSyncs() }
            let owner = try await a.f.create()
            disk.holdSyncs()
            let client = try HTTPListener.connect(a.server)
            let body = JSONWriter.serialize(.object(["signedPayload": .string(Self.subscribed(a, token: owner.token))]))
            try await client.send("POST", "/v1/stores/app-store/acme", body: body)
            try await AnswerDurability.eventually("the change waits for its sync") { disk.syncsWaiting > 0 }
            #expect(try await !client.hasUnreadInput(), "no 200 before the sync")
            disk.releaseSyncs()
            let response = try #require(try await client.readResponse())
            #expect(response.status == 200)
        }
    }

    @Test func whileReadOnlyA503SaysWhenToRetryAndNothingChanges() async throws {
        let disk = FaultyFileSystem()
        try await A.run(configure: {
            $0.fileSystem = disk
            $0.diskReserveBytes = 1 << 20
        }) { a in
            let owner = try await a.f.create()
            disk.reportedFreeBytes = 1000
            #expect(try await DiskFull.waitFor(a.f.admin, readOnly: true))
            let refused = try await Self.post(a, Self.subscribed(a, token: owner.token))
            #expect(refused.status == 503)
            #expect(refused.response.headers["Retry-After"] == "30")
            #expect(refused.body.object("error")?.string("code") == "read_only")
            disk.reportedFreeBytes = nil
            #expect(try await DiskFull.waitFor(a.f.admin, readOnly: false))
            #expect(try await a.eventTypes(after: 0) == [])
            #expect(try await Self.post(a, Self.subscribed(a, token: owner.token)).body == ["applied": true], "Apple's retry applies")
        }
    }
}
