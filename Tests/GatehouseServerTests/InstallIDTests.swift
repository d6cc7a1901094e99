import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// Install ids over real connections (PROTOCOL.md, "Profiles"; DESIGN.md, "Install ids"):
/// `profile.create` takes one, and in every op an install id may stand for `profile_id`.
@Suite struct InstallIDs {
    static let install = "$RCAnonymousID:0123456789abcdef0123456789abcdef"
    static let otherInstall = "$RCAnonymousID:fedcba9876543210fedcba9876543210"

    /// A store fixture whose config also has a currency.
    static func fixture(_ server: TestServer, login: String = "alias") async throws -> StoreFixture {
        let store = try await StoreFixture.make(server, login: login)
        guard case .object(var config) = StoreFixture.config(login: login) else { preconditionFailure("a config is an object") }
        config.append("currencies", [["code": "COINS"]])
        try await store.putConfig(.object(config))
        return store
    }

    /// The project's sequence, which every change moves.
    static func projectCursor(_ f: StoreFixture) async throws -> Int64? {
        try await f.admin.call("project.get", ["project": .string(f.project)]).object("project")?.int("cursor")
    }

    static func create(_ client: TestClient, _ parameters: JSONObject) async throws -> JSONObject {
        let answer = try await client.call("profile.create", parameters)
        guard answer.isSuccess else { throw TestClientError.failed(answer) }
        return answer
    }

    // MARK: profile.create

    @Test func createWithAnInstallIDAndAgainAnswersTheSameProfile() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let first = try await Self.create(f.sdk, ["install_id": .string(Self.install)])
            #expect(first["created"] == true)
            let profile = try #require(first.object("profile"))
            #expect(profile.string("install_id") == Self.install)
            #expect(profile["customer_user_id"] == .null)
            #expect(profile.keys == ["profile_id", "customer_user_id", "install_id", "app_account_token", "aliases", "created_ms",
                                     "last_seen_ms"])
            let cursor = try await Self.projectCursor(f)
            let again = try await Self.create(f.sdk, ["install_id": .string(Self.install)])
            #expect(again["created"] == false)
            #expect(StoreFixture.id(again) == StoreFixture.id(first))
            #expect(try await Self.projectCursor(f) == cursor, "answering the known install id changed nothing")
            // A profile made without one shows null.
            let plain = try await Self.create(f.sdk, [:])
            #expect(plain.object("profile")?["install_id"] == .null)
        }
    }

    @Test(arguments: [
        JSONValue.string("$RCAnonymousID:0123456789ABCDEF0123456789ABCDEF"), "$RCAnonymousID:0123", "$RCAnonymousID:",
        "0123456789abcdef0123456789abcdef", "gh_AAAAAAAAAAAAAAAAAAAAAAAAAA", "alice", 42, ["x": 1], true,
    ])
    func aMalformedInstallIDIsBadRequestNamingTheFieldAndChangesNothing(_ installID: JSONValue) async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let cursor = try await Self.projectCursor(f)
            let answer = try await f.sdk.call("profile.create", ["install_id": installID])
            #expect(answer.errorCode == .badRequest)
            #expect(answer.object("error")?.string("message")?.hasPrefix("install_id") == true, "\(answer)")
            #expect(try await Self.projectCursor(f) == cursor)
            #expect(try await f.admin.call("project.get", ["project": .string(f.project)]).object("project")?.int("profiles") == 0)
        }
    }

    @Test func aKnownCustomerUserIDDecidesAndAnUnseenOneIsTakenByTheAnonymousInstalledProfile() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let alice = try await Self.create(f.sdk, ["customer_user_id": "alice"])
            let installed = try await Self.create(f.sdk, ["install_id": .string(Self.install)])
            // Known customer user id: its profile, whatever the install id.
            let known = try await Self.create(f.sdk, ["customer_user_id": "alice", "install_id": .string(Self.install)])
            #expect(StoreFixture.id(known) == StoreFixture.id(alice) && known["created"] == false)
            // Unseen customer user id, anonymous installed profile: it takes the customer user id.
            let taken = try await Self.create(f.sdk, ["customer_user_id": "bob", "install_id": .string(Self.install)])
            #expect(StoreFixture.id(taken) == StoreFixture.id(installed) && taken["created"] == false)
            #expect(taken.object("profile")?.string("customer_user_id") == "bob")
            #expect(taken.object("profile")?.string("install_id") == Self.install)
            // The installed profile is identified now: a new customer user id gets a new profile,
            // and the install id stays where it is.
            let carol = try await Self.create(f.sdk, ["customer_user_id": "carol", "install_id": .string(Self.install)])
            #expect(carol["created"] == true && StoreFixture.id(carol) != StoreFixture.id(installed))
            #expect(carol.object("profile")?["install_id"] == .null)
            // Neither known: one new profile with both.
            let dave = try await Self.create(f.sdk, ["customer_user_id": "dave", "install_id": .string(Self.otherInstall)])
            #expect(dave["created"] == true)
            #expect(dave.object("profile")?.string("customer_user_id") == "dave")
            #expect(dave.object("profile")?.string("install_id") == Self.otherInstall)
        }
    }

    @Test func aCustomerUserIDThatBeginsAsAnInstallIDIsRefusedEverywhere() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let id = try #require(StoreFixture.id(try await Self.create(f.sdk, [:])))
            let cursor = try await Self.projectCursor(f)
            let named: JSONValue = .string(Self.install)
            let answers = [
                try await f.sdk.call("profile.create", ["customer_user_id": named]),
                try await f.sdk.call("profile.identify", ["profile_id": .string(id), "customer_user_id": named]),
                try await f.backend.call("profile.get", ["customer_user_id": named]),
                try await f.backend.call("currency.transact", [
                    "customer_user_id": named, "currency": "COINS", "amount": 1, "idempotency_key": "k",
                ]),
                try await f.backend.call("currency.history", ["customer_user_id": named, "currency": "COINS"]),
                try await f.sdk.call("profile.create", ["customer_user_id": "$RCAnonymousID:not-hex"]),
            ]
            for answer in answers { #expect(answer.errorCode == .invalidCustomerUserID, "\(answer)") }
            #expect(try await Self.projectCursor(f) == cursor)
        }
    }

    // MARK: An install id for profile_id

    @Test func everyProfileOpTakesAnInstallIDForTheProfile() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await Self.fixture(server)
            let id = try #require(StoreFixture.id(try await Self.create(f.sdk, ["install_id": .string(Self.install)])))
            let install: JSONValue = .string(Self.install)
            for client in [f.sdk, f.backend] {
                #expect(StoreFixture.id(try await client.call("profile.get", ["profile_id": install])) == id)
            }
            #expect(try await f.sdk.call("profile.attributes", ["profile_id": install, "attributes": ["plan": "gold"]]).isSuccess)
            #expect(try await f.backend.call("profile.get", ["profile_id": install]).object("attributes")?.string("plan") == "gold")
            let offerings = try await f.sdk.call("offerings", ["profile_id": install])
            #expect(offerings.isSuccess && offerings["offerings"] != nil)
            let grant = try await f.backend.call("entitlement.grant", ["profile_id": install, "entitlement": "pro", "expires_ms": .null])
            #expect(StoreFixture.id(grant) == id && StoreFixture.entitlement(grant)?["is_active"] == true)
            let revoke = try await f.backend.call("entitlement.revoke", ["profile_id": install, "entitlement": "pro"])
            #expect(StoreFixture.id(revoke) == id && StoreFixture.entitlement(revoke)?["is_active"] == false)
            let credit = try await f.backend.call("currency.transact", [
                "profile_id": install, "currency": "COINS", "amount": 5, "idempotency_key": "k1",
            ])
            #expect(credit["balance"] == 5)
            let history = try await f.backend.call("currency.history", ["profile_id": install, "currency": "COINS"])
            #expect(history["entries"]?.arrayValue?.count == 1)
            let identified = try await f.sdk.call("profile.identify", ["profile_id": install, "customer_user_id": "erin"])
            #expect(StoreFixture.id(identified) == id && identified["switched"] == false)
            let loggedOut = try await f.sdk.call("profile.logout", ["profile_id": install])
            #expect(loggedOut.isSuccess && StoreFixture.id(loggedOut) != id)
            #expect(try await f.backend.call("profile.delete", ["profile_id": install])["deleted"] == true)
            #expect(try await f.sdk.call("profile.get", ["profile_id": install]).errorCode == .notFound)
        }
    }

    @Test func purchasesTakeAnInstallIDForTheProfile() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await Self.fixture(server)
            let id = try #require(StoreFixture.id(try await Self.create(f.sdk, ["install_id": .string(Self.install)])))
            let start = f.startMs
            let reported = try await f.report(Self.install, StoreFixture.subscription(
                "t1", purchasedMs: start, expiresMs: start + StoreFixture.day), via: f.sdk)
            #expect(StoreFixture.id(reported) == id, "\(reported)")
            #expect(StoreFixture.subscription(reported, "t1")?.string("status") == "active")
            let restored = try await f.restore(Self.install, [StoreFixture.oneTime("l1", purchasedMs: start)], via: f.sdk)
            #expect(StoreFixture.id(restored) == id)
            #expect(restored["purchases"]?.arrayValue?.count == 1)
        }
    }

    @Test func syncWatchAndUnwatchTakeAnInstallIDAndTheQuickPathLeavesItToTheFullOne() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await Self.fixture(server)
            let id = try #require(StoreFixture.id(try await Self.create(f.sdk, ["install_id": .string(Self.install)])))
            let install: JSONValue = .string(Self.install)
            let first = try await f.sdk.call("sync", ["profile_id": install])
            #expect(StoreFixture.id(first) == id)
            let cursor = try #require(first.int("cursor"))
            // With the cursor it gave: nothing changed (the line's quick readers take `gh_` ids only).
            let quiet = try await f.sdk.call("sync", ["profile_id": install, "cursor": .int(cursor)])
            #expect(quiet["changed"] == .array([]) && quiet.int("cursor") == cursor)
            #expect(try await f.sdk.call("watch", ["profile_id": install])["watching"] == true)
            #expect(try await f.backend.call("currency.transact", [
                "profile_id": install, "currency": "COINS", "amount": 2, "idempotency_key": "k",
            ]).isSuccess)
            let push = try await f.sdk.readAnswer()
            #expect(push["push"] == "changed" && push.string("profile_id") == id && push["changed"] == ["currencies"])
            let moved = try await f.sdk.call("sync", ["profile_id": install, "cursor": .int(cursor)])
            #expect(moved["changed"] == ["currencies"] && moved["currencies"] == ["COINS": 2])
            #expect(try await f.sdk.call("unwatch", ["profile_id": install])["watching"] == false)
        }
    }

    @Test func anUnknownInstallIDIsNotFoundAndAMalformedProfileIDBadRequestInEveryOp() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await Self.fixture(server)
            _ = try await Self.create(f.sdk, ["install_id": .string(Self.install)])
            let cursor = try await Self.projectCursor(f)
            for (profileID, code) in [(JSONValue.string(Self.otherInstall), ErrorCode.notFound),
                                      ("$RCAnonymousID:0123456789ABCDEF0123456789ABCDEF", .badRequest), ("alice", .badRequest)] {
                let requests: [(TestClient, String, JSONObject)] = [
                    (f.sdk, "profile.get", [:]), (f.sdk, "profile.identify", ["customer_user_id": "zed"]),
                    (f.sdk, "profile.logout", [:]), (f.sdk, "profile.attributes", ["attributes": ["a": "b"]]),
                    (f.backend, "profile.delete", [:]), (f.sdk, "sync", [:]), (f.sdk, "sync", ["cursor": 1]),
                    (f.sdk, "watch", [:]), (f.sdk, "unwatch", [:]), (f.sdk, "offerings", [:]),
                    (f.backend, "entitlement.grant", ["entitlement": "pro", "expires_ms": .null]),
                    (f.backend, "entitlement.revoke", ["entitlement": "pro"]),
                    (f.backend, "currency.transact", ["currency": "COINS", "amount": 1, "idempotency_key": "k"]),
                    (f.backend, "currency.history", ["currency": "COINS"]),
                    (f.sdk, "purchase.report", ["store": "test", "transaction": StoreFixture.oneTime("l1", purchasedMs: f.startMs)]),
                    (f.sdk, "purchase.restore", ["store": "test", "transactions": []]),
                ]
                for (client, op, parameters) in requests {
                    var request = parameters
                    request.append("profile_id", profileID)
                    let answer = try await client.call(op, request)
                    #expect(answer.errorCode == code, "\(op) \(profileID): \(answer)")
                    if code == .badRequest {
                        #expect(answer.object("error")?.string("message")?.hasPrefix("profile_id") == true, "\(op): \(answer)")
                    }
                }
            }
            #expect(try await Self.projectCursor(f) == cursor)
        }
    }

    // MARK: Merges and deletes

    @Test func afterAMergeUnderAliasTheMergedInstallIDResolvesToTheSurvivor() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server, login: "alias")
            let alice = try #require(StoreFixture.id(try await Self.create(f.backend, ["customer_user_id": "alice"])))
            let guest = try #require(StoreFixture.id(try await Self.create(f.sdk, ["install_id": .string(Self.install)])))
            let install: JSONValue = .string(Self.install)
            let cursor = try #require(try await f.sdk.call("sync", ["profile_id": install]).int("cursor"))
            let merge = try await f.sdk.call("profile.identify", ["profile_id": install, "customer_user_id": "alice"])
            #expect(StoreFixture.id(merge) == alice && merge["merged_from"] == .array([.string(guest)]))
            #expect(StoreFixture.id(try await f.sdk.call("profile.get", ["profile_id": install])) == alice)
            let again = try await Self.create(f.sdk, ["install_id": install])
            #expect(StoreFixture.id(again) == alice && again["created"] == false)
            #expect(again.object("profile")?["install_id"] == .null, "the document shows the survivor's own install id")
            // Every sync by the merged install id reports identity, as one by the alias does.
            let afterMerge = try await f.sdk.call("sync", ["profile_id": install, "cursor": .int(cursor)])
            let latest = try #require(afterMerge.int("cursor"))
            #expect(StoreFixture.id(afterMerge) == alice)
            #expect(try await f.sdk.call("sync", ["profile_id": install, "cursor": .int(latest)])["changed"] == ["identity"])
            #expect(try await f.sdk.call("sync", ["profile_id": .string(alice), "cursor": .int(latest)])["changed"] == .array([]))
        }
    }

    @Test func underSwitchTheInstallIDKeepsItsProfile() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server, login: "switch")
            let alice = try #require(StoreFixture.id(try await Self.create(f.backend, ["customer_user_id": "alice"])))
            let guest = try #require(StoreFixture.id(try await Self.create(f.sdk, ["install_id": .string(Self.install)])))
            let switched = try await f.sdk.call("profile.identify", ["profile_id": .string(Self.install), "customer_user_id": "alice"])
            #expect(StoreFixture.id(switched) == alice && switched["switched"] == true)
            #expect(StoreFixture.id(try await f.sdk.call("profile.get", ["profile_id": .string(Self.install)])) == guest)
        }
    }

    @Test func afterADeleteTheInstallIDsAreNotFoundUntilANewProfileTakesOne() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server, login: "alias")
            let alice = try #require(StoreFixture.id(try await Self.create(f.sdk, [
                "customer_user_id": "alice", "install_id": .string(Self.otherInstall),
            ])))
            _ = try await Self.create(f.sdk, ["install_id": .string(Self.install)])
            #expect(try await f.sdk.call("profile.identify", ["profile_id": .string(Self.install), "customer_user_id": "alice"]).isSuccess)
            #expect(try await f.backend.call("profile.delete", ["profile_id": .string(alice)])["deleted"] == true)
            for install in [Self.install, Self.otherInstall] {
                #expect(try await f.sdk.call("profile.get", ["profile_id": .string(install)]).errorCode == .notFound)
            }
            let again = try await Self.create(f.sdk, ["install_id": .string(Self.install)])
            #expect(again["created"] == true && StoreFixture.id(again) != alice)
            #expect(again.object("profile")?.string("install_id") == Self.install)
        }
    }
}
