import GatehouseCore
import GatehouseWire

/// What a RevenueCat `app_user_id` names (HTTP.md, "Requests"; DESIGN.md, "Install ids"): a
/// Gatehouse profile id, an install id an SDK minted, or else a customer user id.
enum AppUserID: Sendable, Equatable {
    case profile(ProfileID)
    case install(InstallID)
    case customer(String)

    init(_ text: String) {
        if let id = ProfileID(parsing: text) {
            self = .profile(id)
        } else if let install = InstallID(parsing: text) {
            self = .install(install)
        } else {
            self = .customer(text)
        }
    }

    /// The fields that name the profile in an op that finds one: an install id stands for a
    /// `profile_id` (PROTOCOL.md), a customer user id is the secret key's `customer_user_id`.
    var lookupFields: JSONObject {
        switch self {
        case .profile(let id): ["profile_id": .string(id.description)]
        case .install(let install): ["profile_id": .string(install.description)]
        case .customer(let text): ["customer_user_id": .string(text)]
        }
    }

    /// The op that finds the profile, creating it when it is not found (`GET
    /// /v1/subscribers/{id}`): `profile.create` finds an install id or customer user id that
    /// exists and creates one that does not; a profile id is only ever found.
    var findOrCreate: (op: String, fields: JSONObject) {
        switch self {
        case .profile(let id): ("profile.get", ["profile_id": .string(id.description)])
        case .install(let install): ("profile.create", ["install_id": .string(install.description)])
        case .customer(let text): ("profile.create", ["customer_user_id": .string(text)])
        }
    }
}
