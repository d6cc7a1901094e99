import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// `web.redeem` and `POST /v1/subscribers/redeem_purchase` refusing what is not a redemption
/// (PROTOCOL.md, "Redeeming web purchases"; HTTP.md, "Endpoints"): each bad input gets its code
/// and changes nothing.
@Suite struct RedemptionRefusals {
    typealias R = RevenueCatFixture

    @Test(arguments: [
        (["redemption_token": "rdrt_x"] as JSONObject, "profile_id"),
        (["profile_id": "nope", "redemption_token": "rdrt_x"] as JSONObject, "profile_id"),
        (["profile_id": "PROFILE"] as JSONObject, "redemption_token"),
        (["profile_id": "PROFILE", "redemption_token": 7] as JSONObject, "redemption_token"),
        (["profile_id": "PROFILE", "redemption_token": .null] as JSONObject, "redemption_token"),
        (["profile_id": "PROFILE", "redemption_token": .string(String(repeating: "a", count: 1025))] as JSONObject, "redemption_token"),
    ])
    func aMalformedRequestIsBadRequestNamingTheField(parameters: JSONObject, field: String) async throws {
        try await withTestServer { server in
            let f = try await StoreFixture.make(server)
            let profile = try await f.create()
            var sent = JSONObject()
            for member in parameters.members {
                sent.append(member.key, member.value == "PROFILE" ? .string(profile.id) : member.value)
            }
            let before = try await f.feedCursor()
            for client in [f.sdk, f.backend] {
                let answer = try await client.call("web.redeem", sent)
                #expect(answer.errorCode == .badRequest)
                #expect(answer.object("error")?.string("message")?.hasPrefix(field) == true, "\(answer)")
            }
            #expect(try await f.feedCursor() == before)
        }
    }

    @Test(arguments: ["", "rdrt_", "rdrt_" + String(repeating: "A", count: 43), "rdrt_" + String(repeating: "!", count: 43),
                      "https://example.com/pay/r/rdrt_abc"])
    func aTokenThisProjectNeverIssuedIsInvalidToken(token: String) async throws {
        try await withTestServer { server in
            let f = try await StoreFixture.make(server)
            let profile = try await f.create()
            let answer = try await f.sdk.call("web.redeem", ["profile_id": .string(profile.id), "redemption_token": .string(token)])
            #expect(answer.errorCode == .invalidToken)
            #expect(answer.object("error")?["legacy_code"] == 7849)
            #expect(try await f.events().isEmpty)
        }
    }

    @Test func anUnknownProfileIsNotFoundAndAnotherProjectsForbidden() async throws {
        try await withTestServer { server in
            let f = try await StoreFixture.make(server)
            let other = try await StoreFixture.make(server, project: "other")
            let theirs = try await other.create()
            let token = JSONValue.string("rdrt_" + String(repeating: "A", count: 43))
            let foreign = try await f.sdk.call("web.redeem", ["profile_id": .string(theirs.id), "redemption_token": token])
            #expect(foreign.errorCode == .forbidden)
            let unknown = try await f.sdk.call("web.redeem", [
                "profile_id": .string(R.installID(77)), "redemption_token": token,
            ])
            #expect(unknown.errorCode == .notFound)
        }
    }

    @Test func theAdminKeyRunsNoRedemption() async throws {
        try await withTestServer { server in
            let f = try await StoreFixture.make(server)
            let profile = try await f.create()
            let answer = try await f.admin.call("web.redeem", ["profile_id": .string(profile.id), "redemption_token": "rdrt_x"])
            #expect(answer.errorCode == .forbidden)
        }
    }

    @Test func restAnswersAnInvalidTokenWithCode7849AndCreatesTheAppUserAsTheSDKsOtherCallsDo() async throws {
        try await R.run { r throws in
            let install = R.installID(1)
            let answer = try await r.post("/v1/subscribers/redeem_purchase", [
                "app_user_id": .string(install), "redemption_token": .string("rdrt_" + String(repeating: "A", count: 43)),
            ])
            #expect(answer.status == 400)
            #expect(answer.code == 7849)
            #expect(answer.body["purchase_redemption_error_info"] == nil)
        }
    }

    @Test(arguments: [
        JSONValue.object(["app_user_id": "u1"]), ["app_user_id": "u1", "redemption_token": 5], ["redemption_token": "rdrt_x"],
        ["app_user_id": "", "redemption_token": "rdrt_x"], "not an object",
    ])
    func restRefusesAMalformedBodyWith400(body: JSONValue) async throws {
        try await R.run { r throws in
            let answer = try await r.post("/v1/subscribers/redeem_purchase", body)
            #expect(answer.status == 400)
            #expect(answer.code != nil)
            #expect(try await r.profileCount() == 0, "nothing is created for a malformed request")
        }
    }

    @Test func restNeedsAKey() async throws {
        try await R.run { r throws in
            let answer = try await r.post("/v1/subscribers/redeem_purchase", ["app_user_id": "u1", "redemption_token": "rdrt_x"],
                                          key: .some(nil))
            #expect(answer.status == 401)
            #expect(answer.code == 7225)
        }
    }
}
