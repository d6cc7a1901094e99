import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// Profiles and identity over real connections (PROTOCOL.md, "Profiles").
@Suite struct Profiles {
    /// A project with a currency, an sdk and a server connection.
    struct Fixture {
        let server: TestServer
        let sdk: TestClient
        let backend: TestClient
        let keys: (publicKey: String, secretKey: String)
    }

    static func fixture(_ server: TestServer, login: String = "alias", project: String = "acme") async throws -> Fixture {
        let keys = try await server.createProject(project)
        let backend = try server.connect()
        try await backend.hello(keys.secretKey)
        let config: JSONValue = ["currencies": [["code": "COINS"]], "login": .string(login)]
        #expect(try await backend.call("config.put", ["config": config]).isSuccess)
        let sdk = try server.connect()
        try await sdk.hello(keys.publicKey)
        return Fixture(server: server, sdk: sdk, backend: backend, keys: keys)
    }

    static func id(_ answer: JSONObject) -> String? { answer.object("profile")?.string("profile_id") }

    @Test func createAnswersTheProfileDocument() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let answer = try await f.sdk.call("profile.create")
            #expect(answer.isSuccess)
            #expect(answer["created"] == true)
            let profile = try #require(answer.object("profile"))
            let id = try #require(profile.string("profile_id"))
            #expect(id.hasPrefix("gh_") && id.count == 29)
            #expect(profile["customer_user_id"] == .null)
            let token = try #require(profile.string("app_account_token"))
            #expect(token.count == 36 && token == token.lowercased())
            #expect(profile["aliases"] == .array([]))
            #expect(profile.int("created_ms") != nil && profile.int("last_seen_ms") != nil)
            #expect(answer["entitlements"] == .object(JSONObject()))
            #expect(answer["subscriptions"] == .object(JSONObject()))
            #expect(answer["purchases"] == .array([]))
            #expect(answer["currencies"] == ["COINS": 0])
            #expect((answer.int("cursor") ?? 0) > 0)
            #expect(answer["attributes"] == nil)
            #expect(answer.keys == ["id", "ok", "profile", "entitlements", "subscriptions", "purchases", "currencies", "cursor", "created"])
        }
    }

    @Test func createWithAKnownCustomerUserIDAnswersThatProfile() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let first = try await f.sdk.call("profile.create", ["customer_user_id": "  alice  "])
            #expect(first["created"] == true)
            #expect(first.object("profile")?.string("customer_user_id") == "alice")
            let again = try await f.sdk.call("profile.create", ["customer_user_id": "alice"])
            #expect(again["created"] == false)
            #expect(Self.id(again) == Self.id(first))
        }
    }

    @Test func createWithATokenAnotherProfileHoldsIsTokenInUse() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let first = try await f.sdk.call("profile.create")
            let token = try #require(first.object("profile")?.string("app_account_token"))
            #expect(try await f.sdk.call("profile.create", ["app_account_token": .string(token)]).errorCode == .tokenInUse)
            #expect(try await f.sdk.call("profile.create", ["app_account_token": "not-a-uuid"]).errorCode == .badRequest)
            let chosen = "0f1e2d3c-4b5a-4978-8a69-5b4c3d2e1f00"
            let mine = try await f.sdk.call("profile.create", ["app_account_token": .string(chosen.uppercased())])
            #expect(mine.object("profile")?.string("app_account_token") == chosen)
        }
    }

    @Test func getByIDForBothRolesAndByCustomerOrTokenForTheServerOnly() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let created = try await f.sdk.call("profile.create", ["customer_user_id": "bob"])
            let id = try #require(Self.id(created))
            let token = try #require(created.object("profile")?.string("app_account_token"))
            #expect(try await f.sdk.call("profile.attributes", ["profile_id": .string(id), "attributes": ["$email": "b@example.com"]]).isSuccess)

            let sdkView = try await f.sdk.call("profile.get", ["profile_id": .string(id)])
            #expect(Self.id(sdkView) == id)
            #expect(sdkView["attributes"] == nil, "only the secret key reads attributes")
            #expect(try await f.sdk.call("profile.get", ["customer_user_id": "bob"]).errorCode == .forbidden)
            #expect(try await f.sdk.call("profile.get", ["app_account_token": .string(token)]).errorCode == .forbidden)

            let serverView = try await f.backend.call("profile.get", ["profile_id": .string(id)])
            #expect(serverView.object("attributes")?.string("$email") == "b@example.com")
            #expect(Self.id(try await f.backend.call("profile.get", ["customer_user_id": "bob"])) == id)
            #expect(Self.id(try await f.backend.call("profile.get", ["app_account_token": .string(token)])) == id)
            #expect(try await f.backend.call("profile.get", ["customer_user_id": "nobody"]).errorCode == .notFound)
            #expect(try await f.backend.call("profile.get").errorCode == .badRequest)
        }
    }

    @Test func unknownMalformedAndForeignProfileIDs() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let other = try await Self.fixture(server, project: "other")
            let foreign = try #require(Self.id(try await other.sdk.call("profile.create")))
            #expect(try await f.sdk.call("profile.get", ["profile_id": .string(foreign)]).errorCode == .forbidden)
            #expect(try await f.backend.call("profile.identify", ["profile_id": .string(foreign), "customer_user_id": "x"]).errorCode == .forbidden)
            #expect(try await f.sdk.call("profile.get", ["profile_id": "gh_nope"]).errorCode == .badRequest)
            #expect(try await f.sdk.call("profile.get", ["profile_id": 42]).errorCode == .badRequest)
            // A well-formed id of this project that does not exist.
            let mine = try #require(Self.id(try await f.sdk.call("profile.create")))
            #expect(try await f.backend.call("profile.delete", ["profile_id": .string(mine)]).isSuccess)
            #expect(try await f.sdk.call("profile.get", ["profile_id": .string(mine)]).errorCode == .notFound)
        }
    }

    @Test func identifyAnonymousTakesAnUnseenID() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let anonymous = try await f.sdk.call("profile.create")
            let id = try #require(Self.id(anonymous))
            let answer = try await f.sdk.call("profile.identify", ["profile_id": .string(id), "customer_user_id": "carol"])
            #expect(answer["switched"] == false)
            #expect(answer["merged_from"] == .array([]))
            #expect(Self.id(answer) == id)
            #expect(answer.object("profile")?.string("customer_user_id") == "carol")
            #expect((answer.int("cursor") ?? 0) > (anonymous.int("cursor") ?? 0), "an identity change moves the cursor")
        }
    }

    @Test func identifyWithAKnownIDMergesUnderAliasAndTheOldIDResolvesForever() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let known = try await f.sdk.call("profile.create", ["customer_user_id": "dave"])
            let anonymous = try await f.sdk.call("profile.create")
            let anonymousID = try #require(Self.id(anonymous))
            let anonymousToken = try #require(anonymous.object("profile")?.string("app_account_token"))
            #expect(try await f.sdk.call("profile.attributes", ["profile_id": .string(anonymousID), "attributes": ["from": "anon"]]).isSuccess)
            let answer = try await f.sdk.call("profile.identify", ["profile_id": .string(anonymousID), "customer_user_id": "dave"])
            #expect(answer["switched"] == true)
            #expect(answer["merged_from"] == .array([.string(anonymousID)]))
            #expect(Self.id(answer) == Self.id(known))
            #expect(answer.object("profile")?["aliases"] == .array([.string(anonymousID)]))
            // The old id and token answer the merged profile from now on.
            #expect(Self.id(try await f.sdk.call("profile.get", ["profile_id": .string(anonymousID)])) == Self.id(known))
            #expect(Self.id(try await f.backend.call("profile.get", ["app_account_token": .string(anonymousToken)])) == Self.id(known))
            #expect(try await f.backend.call("profile.get", ["profile_id": .string(anonymousID)]).object("attributes")?.string("from") == "anon")
            let events = try await f.backend.call("events", ["cursor": 0])
            let alias = try #require(events["events"]?.arrayValue?.compactMap(\.objectValue).first { $0.string("type") == "SUBSCRIBER_ALIAS" })
            #expect(alias.string("profile_id") == Self.id(known))
            #expect(alias.string("customer_user_id") == "dave")
            #expect(alias["merged_from"] == .array([.string(anonymousID)]))
            #expect(alias.string("id") != nil)
            // Stable ids: reading the feed again gives the same event.
            let again = try await f.backend.call("events", ["cursor": 0])
            #expect(again["events"] == events["events"])
        }
    }

    @Test func identifyWithAKnownIDUnderSwitchKeepsBothProfiles() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server, login: "switch")
            let known = try await f.sdk.call("profile.create", ["customer_user_id": "erin"])
            let anonymousID = try #require(Self.id(try await f.sdk.call("profile.create")))
            let answer = try await f.sdk.call("profile.identify", ["profile_id": .string(anonymousID), "customer_user_id": "erin"])
            #expect(answer["switched"] == true)
            #expect(answer["merged_from"] == .array([]))
            #expect(Self.id(answer) == Self.id(known))
            #expect(Self.id(try await f.sdk.call("profile.get", ["profile_id": .string(anonymousID)])) == anonymousID)
        }
    }

    @Test func identifyingAnIdentifiedProfileWithAnUnseenIDCreatesANewOne() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let frank = try #require(Self.id(try await f.sdk.call("profile.create", ["customer_user_id": "frank"])))
            let answer = try await f.sdk.call("profile.identify", ["profile_id": .string(frank), "customer_user_id": "grace"])
            #expect(answer["switched"] == true)
            #expect(Self.id(answer) != frank)
            #expect(answer.object("profile")?.string("customer_user_id") == "grace")
            #expect(try await f.sdk.call("profile.get", ["profile_id": .string(frank)]).object("profile")?.string("customer_user_id") == "frank")
        }
    }

    @Test(arguments: ["", "   ", String(repeating: "x", count: 256)])
    func invalidCustomerUserIDChangesNothing(_ customerUserID: String) async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let id = try #require(Self.id(try await f.sdk.call("profile.create")))
            let before = try await f.sdk.call("profile.get", ["profile_id": .string(id)])
            let answer = try await f.sdk.call("profile.identify", ["profile_id": .string(id), "customer_user_id": .string(customerUserID)])
            #expect(answer.errorCode == .invalidCustomerUserID)
            #expect(try await f.sdk.call("profile.create", ["customer_user_id": .string(customerUserID)]).errorCode == .invalidCustomerUserID)
            #expect(try await f.sdk.call("profile.get", ["profile_id": .string(id)]) ["profile"] == before["profile"])
        }
    }

    @Test func identifyWithATokenAnotherProfileHoldsIsTokenInUseAndChangesNothing() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let holder = try await f.sdk.call("profile.create")
            let token = try #require(holder.object("profile")?.string("app_account_token"))
            let id = try #require(Self.id(try await f.sdk.call("profile.create")))
            let answer = try await f.sdk.call("profile.identify", ["profile_id": .string(id), "customer_user_id": "henry", "app_account_token": .string(token)])
            #expect(answer.errorCode == .tokenInUse)
            #expect(try await f.backend.call("profile.get", ["customer_user_id": "henry"]).errorCode == .notFound)
            let fresh = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
            let assigned = try await f.sdk.call("profile.identify", ["profile_id": .string(id), "customer_user_id": "henry", "app_account_token": .string(fresh)])
            #expect(assigned.object("profile")?.string("app_account_token") == fresh)
        }
    }

    @Test func logoutAnswersANewAnonymousProfileAndNeedsAnIdentifiedOne() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let anonymous = try #require(Self.id(try await f.sdk.call("profile.create")))
            #expect(try await f.sdk.call("profile.logout", ["profile_id": .string(anonymous)]).errorCode == .profileAnonymous)
            let ivy = try #require(Self.id(try await f.sdk.call("profile.create", ["customer_user_id": "ivy"])))
            let answer = try await f.sdk.call("profile.logout", ["profile_id": .string(ivy)])
            #expect(answer.isSuccess)
            #expect(Self.id(answer) != ivy)
            #expect(answer.object("profile")?["customer_user_id"] == .null)
            #expect(try await f.backend.call("profile.get", ["customer_user_id": "ivy"]).object("profile")?.string("profile_id") == ivy)
        }
    }

    @Test func attributesAreValidatedAndOnlyTheServerReadsThem() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let id = try #require(Self.id(try await f.sdk.call("profile.create")))
            let written = try await f.sdk.call("profile.attributes", ["profile_id": .string(id), "attributes": ["$email": "a@b.c", "plan": "gold"]])
            #expect(written.isSuccess)
            #expect(written["attributes"] == nil)
            let read = try await f.backend.call("profile.attributes", ["profile_id": .string(id), "attributes": ["plan": nil]])
            #expect(read["attributes"] == ["$email": "a@b.c"])
            let bad: [JSONValue] = [
                [String(repeating: "k", count: 41): "v"], ["": "v"], ["k": .string(String(repeating: "v", count: 501))], ["k": 5], ["k": ["nested": "x"]],
            ]
            for attributes in bad {
                #expect(try await f.sdk.call("profile.attributes", ["profile_id": .string(id), "attributes": attributes]).errorCode == .badRequest)
            }
            var many = JSONObject()
            for index in 0..<50 { many.append("k\(index)", "v") }
            #expect(try await f.sdk.call("profile.attributes", ["profile_id": .string(id), "attributes": .object(many)]).errorCode == .badRequest,
                    "51 keys with $email")
            #expect(try await f.backend.call("profile.get", ["profile_id": .string(id)]).object("attributes") == ["$email": "a@b.c"])
        }
    }

    @Test func deleteIsForTheServerAndFreesTheCustomerUserID() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            let jack = try #require(Self.id(try await f.sdk.call("profile.create", ["customer_user_id": "jack"])))
            #expect(try await f.sdk.call("profile.delete", ["profile_id": .string(jack)]).errorCode == .forbidden)
            #expect(try await f.backend.call("profile.delete", ["profile_id": .string(jack)])["deleted"] == true)
            #expect(try await f.backend.call("profile.get", ["customer_user_id": "jack"]).errorCode == .notFound)
            let again = try await f.sdk.call("profile.create", ["customer_user_id": "jack"])
            #expect(again["created"] == true)
            #expect(Self.id(again) != jack)
        }
    }

    @Test func eventsAreForTheServerAndTheLimitIsBounded() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            #expect(try await f.sdk.call("events").errorCode == .forbidden)
            #expect(try await f.backend.call("events", ["limit": 1001]).errorCode == .badRequest)
            #expect(try await f.backend.call("events", ["cursor": -1]).errorCode == .badRequest)
            let empty = try await f.backend.call("events")
            #expect(empty["events"] == .array([]))
        }
    }

    @Test func projectsCountTheirProfiles() async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server)
            for _ in 0..<3 { _ = try await f.sdk.call("profile.create") }
            #expect(try await server.admin().call("project.get", ["project": "acme"]).object("project")?.int("profiles") == 3)
        }
    }

    /// DESIGN.md: installs that identify with the same unseen id at the same moment end on one
    /// profile, and exactly one of them is the one that took the id.
    @Test(arguments: ["alias", "switch"])
    func concurrentIdentifyWithOneUnseenIDHasExactlyOneTaker(_ login: String) async throws {
        try await withTestServer { server in
            let f = try await Self.fixture(server, login: login)
            let installs = 12
            var clients: [(TestClient, String)] = []
            for _ in 0..<installs {
                let client = try server.connect()
                try await client.hello(f.keys.publicKey)
                clients.append((client, try #require(Self.id(try await client.call("profile.create")))))
            }
            let pairs = clients
            let answers = try await withThrowingTaskGroup(of: (String, JSONObject).self) { group in
                for (client, id) in pairs {
                    group.addTask { (id, try await client.call("profile.identify", ["profile_id": .string(id), "customer_user_id": "zoe"])) }
                }
                return try await group.reduce(into: [(String, JSONObject)]()) { $0.append($1) }
            }
            let takers = answers.filter { $0.1["switched"] == false }
            #expect(takers.count == 1)
            let winner = try #require(takers.first?.0)
            #expect(Set(answers.compactMap { Self.id($0.1) }) == [winner])
            for (id, answer) in answers where id != winner {
                #expect(answer["merged_from"] == (login == "alias" ? .array([.string(id)]) : .array([])))
            }
        }
    }
}
