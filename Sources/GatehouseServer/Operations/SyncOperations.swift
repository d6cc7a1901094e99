import GatehouseCore
import GatehouseRuntime
import GatehouseWire

/// What SDKs poll (PROTOCOL.md, "Sync and push").
enum SyncOperations {
    static let all: [Operation] = [sync, watch, unwatch, offerings]

    /// Pushes `{"push":"changed",…}` lines to this connection for every later change of the
    /// profile (PROTOCOL.md, "Sync and push"), after the change is durable.
    static let watch = Operation(name: "watch", roles: [.sdk, .server], needsHeldConnection: true, body: .async { context throws(GatehouseError) in
        guard let watches = context.session.watches else { throw GatehouseError(.internal, "this session cannot receive pushes") }
        let project = context.project
        // One step in the actor resolves, claims room on the connection and registers, so
        // neither a merge nor a change can come in between.
        _ = try await project.watch(profile: try ProfileOperations.profileLookup(context.fields), target: watches) {
            canonical throws(GatehouseError) in try watches.reserve(project, canonical)
        }
        return Reply(["watching": true])
    })

    static let unwatch = Operation(name: "unwatch", roles: [.sdk, .server], needsHeldConnection: true, body: .async { context throws(GatehouseError) in
        guard let watches = context.session.watches else { return Reply(["watching": false]) }
        let project = context.project
        let canonical = try await project.canonicalProfile(try ProfileOperations.profileLookup(context.fields))
        watches.release(project, canonical)
        return Reply(["watching": false])
    })

    /// Nothing changed since the client's cursor is answered on the connection's thread from the
    /// project's board, without a document, the actor or the disk; anything else goes to the
    /// actor, which builds the document and answers once the change is durable.
    /// `sync`'s number in the op table, for the requests the quick road answers.
    static let syncNumber = Operations.number(of: "sync")

    static let sync = Operation(
        name: "sync", roles: [.sdk, .server],
        body: .fast(
            inline: { context throws(GatehouseError) in
                let fields = context.fields
                guard let cursor = try syncCursor(fields) else { return nil }
                // The board holds profiles by their own ids: an install id takes the full road.
                guard case .id(let id) = try ProfileOperations.profileLookup(fields) else { return nil }
                guard context.project.syncBoard.nothingChanged(for: id, after: cursor) == true else { return nil }
                return ["cursor": .int(Int64(cursor)), "changed": .array([])]
            },
            slow: { context throws(GatehouseError) in
                let fields = context.fields
                let cursor = try syncCursor(fields)
                let outcome = try await context.project.sync(profile: try ProfileOperations.profileLookup(fields), cursor: cursor)
                var result: JSONObject = [
                    "cursor": .int(Int64(outcome.value.cursor)),
                    "changed": .array(outcome.value.changed.map { .string($0.rawValue) }),
                ]
                guard let view = outcome.value.view else { return Reply(result) }
                for member in ProfileOperations.document(view, context).members where member.key != "cursor" {
                    result.append(member.key, member.value)
                }
                return Reply(result, after: outcome.lsn)
            }))

    static func syncCursor(_ fields: Fields) throws(GatehouseError) -> UInt64? {
        try fields.optionalInt("cursor", in: 0...Int64.max).map { UInt64($0) }
    }

    static let offerings = Operation(name: "offerings", roles: [.sdk, .server], body: .async { context throws(GatehouseError) in
        let config = try await context.project.offerings(for: try ProfileOperations.profileLookup(context.fields))
        return Reply(OfferingsDocument.json(config.value), after: config.lsn)
    })
}
