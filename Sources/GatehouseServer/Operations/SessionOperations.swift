import GatehouseCore
import GatehouseRuntime
import GatehouseWire

/// `hello` and `ping`: the session itself.
enum SessionOperations {
    static let all: [Operation] = [hello, ping]

    /// Authenticates the connection. A failed `hello` leaves the connection unauthenticated,
    /// whatever it was before, so a client never keeps acting under a role it did not expect.
    static let hello = Operation(name: "hello", roles: [], needsHeldConnection: true, body: .session { request, session, core throws(GatehouseError) in
        let key: String
        switch Result(catching: { () throws(GatehouseError) in try request.fields.string("key") }) {
        case .success(let value):
            key = value
        case .failure(let error):
            session.set(nil)
            throw error
        }
        guard let principal = core.registry.authenticate(key: key) else {
            session.set(nil)
            throw GatehouseError(.unauthorized, "the key is not valid")
        }
        session.set(principal)
        return [
            "role": .string(principal.role.rawValue),
            "project": .optional(principal.project) { .string($0.id.rawValue) },
            "server": .string(GatehouseVersion.serverString),
            "time_ms": .int(core.clock.nowMs()),
        ]
    })

    /// A cheap round trip for keep-alives (the idle timeout counts from the last request).
    static let ping = Operation(name: "ping", roles: Set(Role.allCases), body: .inline { context throws(GatehouseError) in
        ["time_ms": .int(context.core.clock.nowMs())]
    })
}
