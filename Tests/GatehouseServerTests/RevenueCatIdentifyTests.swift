import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// `POST /v1/subscribers/identify` (HTTP.md, "Endpoints") in every case of DESIGN.md's
/// `profile.identify` rules: it runs that op, so the cases are the op's.
@Suite struct RevenueCatIdentify {
    typealias R = RevenueCatFixture

    static func identify(_ r: R, _ from: String, _ to: String) async throws -> R.Answer {
        try await r.post("/v1/subscribers/identify", ["app_user_id": .string(from), "new_app_user_id": .string(to)])
    }

    @Test func anAnonymousInstallTakesAnUnseenIDWith201() async throws {
        try await R.run { r throws in
            let install = R.installID(1)
            _ = try await r.subscriber(install)
            let before = try await r.profile(install)
            let answer = try await Self.identify(r, install, "u1")
            #expect(answer.status == 201)
            #expect(answer.subscriber?.string("original_app_user_id") == install, "the profile the install was created with")
            let after = try await r.profile(install)
            #expect(after.object("profile")?.string("profile_id") == before.object("profile")?.string("profile_id"))
            #expect(after.object("profile")?.string("customer_user_id") == "u1")
            #expect(try await r.profileCount() == 1)
        }
    }

    @Test func anInstallNeverSeenIsCreatedThenIdentified() async throws {
        try await R.run { r throws in
            let install = R.installID(2)
            #expect(try await Self.identify(r, install, "u1").status == 201)
            #expect(try await r.profile(install).object("profile")?.string("customer_user_id") == "u1")
        }
    }

    @Test func anIDTheProfileHasIs200AndChangesNothing() async throws {
        try await R.run { r throws in
            _ = try await r.subscriber("u1")
            let etag = try #require(try await r.subscriber("u1").etag)
            let answer = try await Self.identify(r, "u1", "u1")
            #expect(answer.status == 200)
            #expect(answer.subscriber?.string("original_app_user_id") == "u1")
            #expect(try await r.subscriber("u1", etag: etag).status == 304, "nothing changed")
        }
    }

    @Test func anAnonymousInstallIdentifyingAsAnExistingIDIsMergedIntoItWith200() async throws {
        try await R.run { r throws in
            let existing = try await r.subscriber("u1")
            #expect(existing.status == 201)
            let install = R.installID(3)
            _ = try await r.subscriber(install)
            // The install bought something while anonymous: it moves with the merge.
            #expect(try await r.receipt(install, r.signedTransaction("7000000001")).status == 200)
            let answer = try await Self.identify(r, install, "u1")
            #expect(answer.status == 200)
            let subscriber = try #require(answer.subscriber)
            #expect(subscriber.string("original_app_user_id") == "u1", "the surviving profile's")
            #expect(subscriber.object("entitlements")?.object("pro") != nil)
            // The install id resolves to the survivor through the merge, forever.
            #expect(try await r.subscriber(install).subscriber?.string("original_app_user_id") == "u1")
            #expect(try await r.profileCount() == 1)
        }
    }

    @Test func underSwitchTheAnonymousInstallKeepsWhatItHad() async throws {
        try await R.run { r throws in
            var config = try #require(R.A.config().objectValue)
            config["login"] = "switch"
            try await r.a.f.putConfig(.object(config))
            _ = try await r.subscriber("u1")
            let install = R.installID(4)
            #expect(try await r.receipt(install, r.signedTransaction("7000000001")).status == 200)
            let answer = try await Self.identify(r, install, "u1")
            #expect(answer.status == 200)
            #expect(answer.subscriber?.object("entitlements")?.object("pro") == nil, "u1 did not get the install's purchase")
            #expect(try await r.subscriber(install).subscriber?.object("entitlements")?.object("pro") != nil)
            #expect(try await r.profileCount() == 2)
        }
    }

    @Test func anIdentifiedProfileIdentifyingAsAnUnseenIDGetsANewProfileWith201() async throws {
        try await R.run { r throws in
            _ = try await r.subscriber("u1")
            let answer = try await Self.identify(r, "u1", "u2")
            #expect(answer.status == 201)
            #expect(answer.subscriber?.string("original_app_user_id") == "u2")
            #expect(try await r.profileCount() == 2, "u1 is left as it is")
        }
    }

    @Test func badIDsAre7220Or7256AndChangeNothing() async throws {
        try await R.run { r throws in
            let install = R.installID(5)
            _ = try await r.subscriber(install)
            let missing = try await r.post("/v1/subscribers/identify", ["app_user_id": .string(install)])
            #expect(missing.status == 400 && missing.code == 7220)
            let blank = try await Self.identify(r, install, "   ")
            #expect(blank.status == 400 && blank.code == 7220)
            let long = try await Self.identify(r, install, String(repeating: "y", count: 256))
            #expect(long.status == 400 && long.code == 7256)
            let reserved = try await Self.identify(r, install, "$RCAnonymousID:xyz")
            #expect(reserved.status == 400 && reserved.code == 7256)
            let notJSON = try await r.request("POST", "/v1/subscribers/identify", body: .string("x"))
            #expect(notJSON.status == 400)
            #expect(try await r.profile(install).object("profile")?["customer_user_id"] == .null)
            #expect(try await r.profileCount() == 1)
        }
    }
}
