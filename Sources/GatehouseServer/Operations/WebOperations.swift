import GatehouseCore
import GatehouseRuntime
import GatehouseWire

/// Redeeming web purchases (PROTOCOL.md, "Web purchases and outbound delivery").
enum WebOperations {
    static let all: [Operation] = [redeem]

    /// `web.redeem`: the profile takes over the purchase of a redemption link; its document, or
    /// `invalid_token`, `purchase_belongs_to_other_user` or `expired` (with `obfuscated_email`).
    static let redeem = Operation(name: "web.redeem", roles: [.sdk, .server], body: .project { context throws(GatehouseError) in
        let fields = context.fields
        let id = try ProfileOperations.profileLookup(fields)
        let token = try fields.string("redemption_token")
        guard token.utf8.count <= redemptionTokenMaxBytes else {
            throw GatehouseError.badField("redemption_token", "is at most \(redemptionTokenMaxBytes) bytes")
        }
        return { project throws(GatehouseError) in
            let view = try project.redeem(profile: id, token: token)
            return Reply(ProfileOperations.document(view.value, context), after: view.lsn, showing: ShownProfile(view: view.value))
        }
    })

    /// Far above a token's 48 characters: anything longer is a malformed request, not a token.
    static let redemptionTokenMaxBytes = 1024
}
