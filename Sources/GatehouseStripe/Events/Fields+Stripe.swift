import GatehouseCore
import GatehouseWire

/// Reads of the shapes Stripe's objects share.
extension Fields {
    /// An expandable reference (`"sub_…"`, or the object itself when the request expanded it):
    /// its id either way.
    func optionalExpandableID(_ key: String) throws(GatehouseError) -> String? {
        guard let value = value(key) else { return nil }
        if let id = value.stringValue { return id }
        guard value.objectValue != nil else {
            throw .badField(name(key), "expected an id or an object, got \(value.typeName)")
        }
        return try object(key).string("id")
    }

    func expandableID(_ key: String) throws(GatehouseError) -> String {
        guard let id = try optionalExpandableID(key) else { throw .badField(name(key), "is required") }
        return id
    }

    /// Stripe's `metadata`: string keys to string values; absent or `null` reads as empty.
    func metadata(_ key: String = "metadata") throws(GatehouseError) -> [String: String] {
        guard let object = try optionalOpaqueObject(key) else { return [:] }
        var metadata: [String: String] = [:]
        for member in object.members {
            guard let value = member.value.stringValue else {
                throw .badField("\(name(key)).\(member.key)", "expected a string, got \(member.value.typeName)")
            }
            metadata[member.key] = value
        }
        return metadata
    }

    /// The objects of a Stripe list (`{"object":"list","data":[…],"has_more":…}`).
    func listData(_ key: String) throws(GatehouseError) -> [Fields] {
        try object(key).objects("data")
    }

    /// Refuses an object whose `object` names another kind than the event type carries.
    func expectKind(_ kind: String) throws(GatehouseError) {
        let found = try string("object")
        guard found == kind else { throw .badField(name("object"), "expected \"\(kind)\", got \"\(found)\"") }
    }
}
