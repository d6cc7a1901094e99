import GatehouseCore
import GatehouseRuntime
import GatehouseWire

/// Profiles and identity (PROTOCOL.md, "Profiles").
enum ProfileOperations {
    static let all: [Operation] = [create, get, identify, logout, attributes, delete, events]

    static let create = Operation(name: "profile.create", roles: [.sdk, .server], body: .project { context throws(GatehouseError) in
        let fields = context.fields
        let customerUserID = try fields.optionalString("customer_user_id")
        let token = try token(fields, "app_account_token")
        let installID = try installID(fields, "install_id")
        return { project throws(GatehouseError) in
            let outcome = try project.createProfile(customerUserID: customerUserID, token: token, installID: installID,
                                                    by: context.principal.role)
            var result = document(outcome.value.view, context)
            result.append("created", .bool(outcome.value.created))
            return Reply(result, after: outcome.lsn, showing: ShownProfile(view: outcome.value.view, created: outcome.value.created))
        }
    })

    static let get = Operation(name: "profile.get", roles: [.sdk, .server], body: .project { context throws(GatehouseError) in
        let fields = context.fields
        let lookup: ProfileLookup
        if fields.has("profile_id") {
            lookup = try profileLookup(fields)
        } else if fields.has("customer_user_id") || fields.has("app_account_token") {
            // The public key ships inside every app: it may only name profiles by their id.
            guard context.principal.role == .server else {
                throw GatehouseError(.forbidden, "an sdk key may look profiles up by profile_id only")
            }
            if let token = try token(fields, "app_account_token") {
                lookup = .token(token)
            } else {
                lookup = .customerUserID(try fields.string("customer_user_id"))
            }
        } else {
            throw GatehouseError.badField("profile_id", "is required")
        }
        return { project throws(GatehouseError) in
            let view = try project.profile(lookup)
            return Reply(document(view.value, context, attributes: context.principal.role == .server), after: view.lsn,
                         showing: ShownProfile(view: view.value))
        }
    })

    static let identify = Operation(name: "profile.identify", roles: [.sdk, .server], body: .project { context throws(GatehouseError) in
        let fields = context.fields
        let id = try profileLookup(fields)
        let customerUserID = try fields.string("customer_user_id")
        let token = try token(fields, "app_account_token")
        return { project throws(GatehouseError) in
            let outcome = try project.identify(profile: id, customerUserID: customerUserID, token: token, by: context.principal.role)
            var result = document(outcome.value.view, context)
            result.append("switched", .bool(outcome.value.switched))
            result.append("merged_from", .array(outcome.value.mergedFrom.map { .string($0.description) }))
            return Reply(result, after: outcome.lsn, showing: ShownProfile(view: outcome.value.view, created: outcome.value.created))
        }
    })

    static let logout = Operation(name: "profile.logout", roles: [.sdk, .server], body: .project { context throws(GatehouseError) in
        let id = try profileLookup(context.fields)
        return { project throws(GatehouseError) in
            let outcome = try project.logout(profile: id, by: context.principal.role)
            return Reply(document(outcome.value.view, context), after: outcome.lsn)
        }
    })

    /// SDKs may write attributes; only the secret key reads them back.
    static let attributes = Operation(name: "profile.attributes", roles: [.sdk, .server], body: .project { context throws(GatehouseError) in
        let fields = context.fields
        let id = try profileLookup(fields)
        let object = try fields.object("attributes")
        var updates: [ProjectState.AttributeUpdate] = []
        for member in object.object.members { updates.append(try attributeUpdate(member, in: object)) }
        return { [updates] project throws(GatehouseError) in
            let updated = try project.updateAttributes(profile: id, updates)
            guard context.principal.role == .server else { return Reply([:], after: updated.lsn) }
            return Reply(["attributes": ProfileDocument.attributes(updated.value)], after: updated.lsn)
        }
    })

    static let delete = Operation(name: "profile.delete", roles: [.server], body: .project { context throws(GatehouseError) in
        let id = try profileLookup(context.fields)
        return { project throws(GatehouseError) in Reply(["deleted": true], after: try project.deleteProfile(id)) }
    })

    static let events = Operation(name: "events", roles: [.server], body: .project { context throws(GatehouseError) in
        let cursor = try context.fields.optionalInt("cursor", in: 0...Int64.max) ?? 0
        let limit = try context.fields.optionalInt("limit", in: 1...1000) ?? 100
        return { project in
            let page = project.events(after: UInt64(cursor), limit: Int(limit))
            let last = page.value.last?.cursor ?? UInt64(cursor)
            // `webhook.test`'s events are the outbox's, not the customers': the cursor passes them.
            let shown = page.value.filter { $0.type != .test }
            return Reply(["events": .array(shown.map(EventDocument.json)), "cursor": .int(Int64(last))], after: page.lsn)
        }
    })

    // MARK: Parameters

    /// `profile_id`: a profile id (or alias), or an install id standing for it (PROTOCOL.md,
    /// "Profiles"); the project resolves either in the step that uses it.
    static func profileLookup(_ fields: Fields) throws(GatehouseError) -> ProfileLookup {
        let text = try fields.string("profile_id")
        if let id = ProfileID(parsing: text) { return .id(id) }
        if let installID = InstallID(parsing: text) { return .installID(installID) }
        throw GatehouseError.badField("profile_id", "is not a profile id or an install id")
    }

    static func installID(_ fields: Fields, _ key: String) throws(GatehouseError) -> InstallID? {
        guard let text = try fields.optionalString(key) else { return nil }
        guard let installID = InstallID(parsing: text) else {
            throw GatehouseError.badField(key, "is not an install id (\(InstallID.prefix) and 32 lowercase hex digits)")
        }
        return installID
    }

    /// One member of `attributes`: a string or `null` (set now, or delete), or RevenueCat's
    /// `{"value": string or null, "updated_at_ms": integer}` (set or delete as of that time).
    static func attributeUpdate(_ member: JSONObject.Member, in attributes: Fields) throws(GatehouseError)
        -> ProjectState.AttributeUpdate
    {
        let field = attributes.name(member.key)
        switch member.value {
        case .null: return .init(key: member.key, value: nil)
        case .string(let value): return .init(key: member.key, value: value)
        case .object(let object):
            let timed = Fields(object, path: field)
            guard let value = object["value"] else { throw GatehouseError.badField(timed.name("value"), "is required (null deletes)") }
            guard value.isNull || value.stringValue != nil else {
                throw GatehouseError.badField(timed.name("value"), "expected a string or null, got \(value.typeName)")
            }
            let updatedMs = try timed.int("updated_at_ms", in: 0...Self.attributeTimeMaxMs)
            return .init(key: member.key, value: value.stringValue, updatedMs: updatedMs)
        default:
            throw GatehouseError.badField(field, "expected a string, null or {value, updated_at_ms}, got \(member.value.typeName)")
        }
    }

    /// The latest `updated_at_ms` taken: 2^53, the most a JSON number holds exactly.
    static let attributeTimeMaxMs = Int64(1) << 53

    static func token(_ fields: Fields, _ key: String) throws(GatehouseError) -> AppAccountToken? {
        guard let text = try fields.optionalString(key) else { return nil }
        guard let token = AppAccountToken(parsing: text) else { throw GatehouseError.badField(key, "must be a UUID") }
        return token
    }

    static func document(_ view: ProfileView, _ context: OperationContext, attributes: Bool = false) -> JSONObject {
        ProfileDocument.json(view.profile, holdings: view.holdings, config: view.config, includeAttributes: attributes)
    }
}
