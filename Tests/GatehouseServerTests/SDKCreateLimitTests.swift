import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// The public key ships inside every app, so the profiles it may create are limited per project:
/// `limits.sdk_creates_per_second`, in bursts of ten times that (PROTOCOL.md, "Configuration").
/// The test clock stands still, so the bucket refills only when `clock.advance` moves it.
@Suite struct SDKCreateLimit {
    static let rate: Int64 = 2
    static let burst = Int(rate) * 10

    /// A project limited to `rate` creations a second, its connections and the admin's.
    struct World {
        let server: TestServer
        let sdk: TestClient
        let backend: TestClient
        let admin: TestClient

        func profileCount() async throws -> Int64? {
            try await admin.call("project.get", ["project": "acme"]).object("project")?.int("profiles")
        }

        func advance(ms: Int64) async throws {
            #expect(try await admin.call("clock.advance", ["ms": .int(ms)]).isSuccess)
        }

        /// `count` anonymous creations by the public key, each expected to succeed.
        func create(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            for index in 0..<count {
                let answer = try await sdk.call("profile.create")
                #expect(answer["created"] == true, "creation \(index): \(answer)", sourceLocation: sourceLocation)
            }
        }

        /// A creation by the public key is refused, and no profile appears.
        func expectOverloaded(_ op: String, _ parameters: JSONObject = [:], sourceLocation: SourceLocation = #_sourceLocation)
            async throws
        {
            let before = try await profileCount()
            let answer = try await sdk.call(op, parameters)
            #expect(answer.errorCode == .overloaded, "\(answer)", sourceLocation: sourceLocation)
            #expect(answer.object("error")?.int("limit") == SDKCreateLimit.rate, sourceLocation: sourceLocation)
            #expect(try await profileCount() == before, "changes nothing", sourceLocation: sourceLocation)
        }
    }

    static func withWorld(_ body: (World) async throws -> Void) async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let keys = try await server.createProject("acme")
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            let config: JSONValue = ["limits": ["sdk_creates_per_second": .int(rate)]]
            #expect(try await backend.call("config.put", ["config": config]).isSuccess)
            let sdk = try server.connect()
            try await sdk.hello(keys.publicKey)
            try await body(World(server: server, sdk: sdk, backend: backend, admin: try await server.admin()))
        }
    }

    @Test func aBurstOfTenTimesTheRateThenOverloaded() async throws {
        try await Self.withWorld { world in
            try await world.create(Self.burst)
            try await world.expectOverloaded("profile.create")
            try await world.expectOverloaded("profile.create", ["customer_user_id": "new-user"])
            #expect(try await world.profileCount() == Int64(Self.burst))
        }
    }

    @Test func eachSecondAddsTheRate() async throws {
        try await Self.withWorld { world in
            try await world.create(Self.burst)
            try await world.advance(ms: 1_000)
            try await world.create(Int(Self.rate))
            try await world.expectOverloaded("profile.create")
            try await world.advance(ms: 499)
            try await world.expectOverloaded("profile.create")
            try await world.advance(ms: 1)
            try await world.create(1)
            // A long wait fills the bucket to its burst, no further.
            try await world.advance(ms: 3_600_000)
            try await world.create(Self.burst)
            try await world.expectOverloaded("profile.create")
        }
    }

    @Test func theSecretKeyIsNotLimited() async throws {
        try await Self.withWorld { world in
            try await world.create(Self.burst)
            try await world.expectOverloaded("profile.create")
            for index in 0..<(Self.burst + 5) {
                #expect(try await world.backend.call("profile.create")["created"] == true, "server creation \(index)")
            }
            try await world.expectOverloaded("profile.create")
        }
    }

    /// A create that finds its customer user id creates nothing, so it takes no token, and it
    /// still answers when the bucket is empty.
    @Test func findingAnExistingCustomerUserIdTakesNoToken() async throws {
        try await Self.withWorld { world in
            #expect(try await world.backend.call("profile.create", ["customer_user_id": "alice"])["created"] == true)
            for _ in 0..<5 {
                #expect(try await world.sdk.call("profile.create", ["customer_user_id": "alice"])["created"] == false)
            }
            try await world.create(Self.burst)
            try await world.expectOverloaded("profile.create")
            let found = try await world.sdk.call("profile.create", ["customer_user_id": "alice"])
            #expect(found.isSuccess && found["created"] == false)
        }
    }

    /// An install id is the same: one that resolves creates nothing (also when its anonymous
    /// profile takes a customer user id) and answers past the limit; an unseen one creates a
    /// profile, so it takes a token.
    @Test func findingAnExistingInstallIDTakesNoTokenAndAnUnseenOneDoes() async throws {
        try await Self.withWorld { world in
            let install: JSONValue = "$RCAnonymousID:0123456789abcdef0123456789abcdef"
            #expect(try await world.sdk.call("profile.create", ["install_id": install])["created"] == true)
            try await world.create(Self.burst - 1)
            try await world.expectOverloaded("profile.create", ["install_id": "$RCAnonymousID:fedcba9876543210fedcba9876543210"])
            #expect(try await world.sdk.call("profile.create", ["install_id": install])["created"] == false)
            let named = try await world.sdk.call("profile.create", ["install_id": install, "customer_user_id": "bob"])
            #expect(named["created"] == false && named.object("profile")?.string("customer_user_id") == "bob")
        }
    }

    /// Identify creates a profile when an identified one logs in as an unseen user; logout always
    /// creates the anonymous one. Both take tokens, and neither changes anything past the limit.
    @Test func identifyAndLogoutThatCreateAreLimitedToo() async throws {
        try await Self.withWorld { world in
            let created = try await world.sdk.call("profile.create", ["customer_user_id": "bob"])
            let bob = try #require(created.object("profile")?["profile_id"])
            try await world.create(Self.burst - 1)
            try await world.expectOverloaded("profile.identify", ["profile_id": bob, "customer_user_id": "carol"])
            try await world.expectOverloaded("profile.logout", ["profile_id": bob])
            let still = try await world.sdk.call("profile.get", ["profile_id": bob])
            #expect(still.object("profile")?["customer_user_id"] == "bob")
            try await world.advance(ms: 1_000)
            let identified = try await world.sdk.call("profile.identify", ["profile_id": bob, "customer_user_id": "carol"])
            #expect(identified["switched"] == true)
            #expect(try await world.sdk.call("profile.logout", ["profile_id": bob]).isSuccess)
            try await world.expectOverloaded("profile.logout", ["profile_id": bob])
        }
    }

    /// Identify that creates nothing (an anonymous profile takes the customer user id, or the
    /// profile already has it) answers when the bucket is empty.
    @Test func identifyThatCreatesNothingTakesNoToken() async throws {
        try await Self.withWorld { world in
            try await world.create(Self.burst)
            let backendCreated = try await world.backend.call("profile.create")
            let anonymous = try #require(backendCreated.object("profile")?["profile_id"])
            let took = try await world.sdk.call("profile.identify", ["profile_id": anonymous, "customer_user_id": "dan"])
            #expect(took.isSuccess && took["switched"] == false)
            let again = try await world.sdk.call("profile.identify", ["profile_id": anonymous, "customer_user_id": "dan"])
            #expect(again.isSuccess)
            try await world.expectOverloaded("profile.create")
        }
    }

    /// A new rate applies from the next creation: the bucket keeps its tokens, within the new burst.
    @Test func aConfigPutChangesTheRate() async throws {
        try await Self.withWorld { world in
            try await world.create(Self.burst)
            try await world.expectOverloaded("profile.create")
            let faster: JSONValue = ["limits": ["sdk_creates_per_second": 5]]
            #expect(try await world.backend.call("config.put", ["config": faster]).isSuccess)
            try await world.advance(ms: 1_000)
            for _ in 0..<5 { #expect(try await world.sdk.call("profile.create")["created"] == true) }
            #expect(try await world.sdk.call("profile.create").errorCode == .overloaded)
        }
    }
}
