import GatehouseCore
import GatehouseRuntime
import GatehouseWire

/// What SDKs poll (PROTOCOL.md, "Sync and push").
enum SyncOperations {
    static let all: [Operation] = [offerings]

    static let offerings = Operation(name: "offerings", roles: [.sdk, .server], body: .async { context throws(GatehouseError) in
        let config = try await context.project.offerings(for: try ProfileOperations.profileID(context.fields))
        return Reply(OfferingsDocument.json(config.value), after: config.lsn)
    })
}
