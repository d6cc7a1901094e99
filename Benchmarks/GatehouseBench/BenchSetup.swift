import GatehouseBase
import GatehousePosix
import GatehouseWire

/// The server a run talks to, and the operator's key for it.
struct BenchTarget: Sendable {
    let address: HostPort
    /// The server's HTTP listener, for the `http.` ops; nil when it is not known.
    var httpAddress: HostPort?
    let adminKey: String
    /// How the report names the server: `in-process (fsync always)` or its address.
    let label: String
    /// An in-process server whose data directory is deleted at the end: what an op leaves
    /// behind (``BenchLeftovers``) need not be cleaned up one by one.
    var isThrowaway = false
}

/// The project a run creates for itself, so runs never touch an operator's real tenants and
/// never see one another's data.
struct BenchProject: Sendable {
    let id: String
    let publicKey: String
    let secretKey: String

    func key(_ key: BenchKey, adminKey: String) -> String {
        switch key {
        case .publicKey: publicKey
        case .secretKey: secretKey
        case .admin: adminKey
        }
    }
}

/// Creating and removing the bench project, with blocking calls (run off the concurrency pool).
enum BenchSetup {
    /// Small but complete: an entitlement, a subscription granting it, a currency, a default
    /// offering and the test store, so future ops (`sync`, `currency.transact`, purchases)
    /// have something to act on.
    static let config: JSONValue = [
        "entitlements": [["id": "pro"]],
        "products": [
            ["id": "pro_monthly", "type": "subscription", "entitlements": ["pro"],
             "grants": [["currency": "COINS", "amount": 100, "on": "purchase"]]],
        ],
        "currencies": [["code": "COINS", "name": "Coins"]],
        "offerings": [
            ["id": "default", "is_default": true,
             "packages": [["id": "monthly", "type": "monthly", "product": "pro_monthly"]]],
        ],
        "stores": ["test": true],
    ]

    /// Creates `bench-<random>` with the admin key and installs ``config`` with its secret key.
    static func createProject(on target: BenchTarget) throws(BenchFailure) -> BenchProject {
        let admin = try BenchSession(connectingTo: target.address)
        defer { admin.close() }
        let role = try admin.hello(target.adminKey)
        guard role == "admin" else {
            throw BenchFailure("the key given is not the admin key (the server granted role \(role))")
        }
        let alphabet = TokenAlphabet("abcdefghijklmnopqrstuvwxyz0123456789")
        let id = "bench-" + SystemRandomSource().randomToken(alphabet: alphabet, length: 10)
        let created = try admin.call(["op": "project.create", "project": .string(id)])
        guard let keys = created["keys"]?.objectValue, let publicKey = keys["public"]?.stringValue,
            let secretKey = keys["secret"]?.stringValue
        else { throw BenchFailure("project.create answered without keys") }
        let project = BenchProject(id: id, publicKey: publicKey, secretKey: secretKey)

        let backend = try BenchSession(connectingTo: target.address)
        defer { backend.close() }
        do {
            try backend.hello(secretKey)
            _ = try backend.call(["op": "config.put", "config": config])
        } catch {
            deleteProject(project, on: target)
            throw error
        }
        return project
    }

    /// Best effort: a failed delete must not turn a finished measurement into a failure.
    static func deleteProject(_ project: BenchProject, on target: BenchTarget) {
        do {
            let admin = try BenchSession(connectingTo: target.address)
            defer { admin.close() }
            try admin.hello(target.adminKey)
            _ = try admin.call(["op": "project.delete", "project": .string(project.id)])
        } catch {
            printError("warning: could not delete project \(project.id): \(error)")
        }
    }
}
