import GatehouseWire

/// Which key a load connection says `hello` with.
enum BenchKey: String, Sendable {
    /// The bench project's public key (role `sdk`), what an app ships with.
    case publicKey = "public"
    /// The bench project's secret key (role `server`), what an app's backend holds.
    case secretKey = "secret"
    /// The operator's admin key.
    case admin
}

/// What an op leaves on the server besides the bench project. A run against a server that
/// outlives it (`--connect`) removes it at the end; an in-process server is thrown away whole.
enum BenchLeftovers: Sendable {
    case nothing
    /// Projects named `<bench project>-b<n>` (``BenchOp/createdProjectInfix``), one per request.
    case createdProjects
}

/// One thing the load mode can measure. Adding an op is one entry in ``all``.
///
/// The request template is sent over and over (see ``RequestTemplate``: `{n}` is a counter
/// unique across the run, `{key}` the connection's key, `{bench_project}` the bench project's
/// id as plain text (for use inside a JSON string), and any other `{name}` comes from
/// `setup`). `setup` runs once per connection, after `hello` and before the clock starts,
/// for what an op needs to exist first. A `sync` entry, for example, would read:
///
///     BenchOp(
///         name: "sync", key: .publicKey,
///         request: #"{"id":{n},"op":"sync","profile_id":{profile_id},"cursor":{cursor}}"#,
///         about: "sync that finds nothing changed (a profile per connection)",
///         setup: { session throws(BenchFailure) in
///             let document = try session.call(["op": "profile.create"])
///             let profile = document["profile"]?.objectValue?["profile_id"] ?? .null
///             let synced = try session.call(["op": "sync", "profile_id": profile])
///             return ["profile_id": profile, "cursor": synced["cursor"] ?? .null]
///         })
///
/// An op with an `.http` transport sends the same template as the body of an HTTP request
/// (``HTTPRequestTemplate``), its key in `Authorization` rather than in a `hello`; its setup
/// runs over a line session as any op's does, and the load connections then go to the HTTP
/// listener instead.
struct BenchOp: Sendable {
    typealias Setup = @Sendable (BenchSession) throws(BenchFailure) -> [String: JSONValue]

    let name: String
    let key: BenchKey
    let request: String
    /// One line for `--help`.
    let about: String
    let setup: Setup?
    let leftovers: BenchLeftovers
    let transport: BenchTransport

    init(name: String, key: BenchKey, request: String, about: String, setup: Setup? = nil,
         leftovers: BenchLeftovers = .nothing, transport: BenchTransport = .line)
    {
        self.name = name
        self.key = key
        self.request = request
        self.about = about
        self.setup = setup
        self.leftovers = leftovers
        self.transport = transport
    }

    /// Whether the server sees the op's key: an HTTP op without `Authorization` sends none.
    var sendsKey: Bool {
        if case .http(_, _, let authorized) = transport { authorized } else { true }
    }

    /// What `project.create` puts between the bench project's id and `{n}`: the projects a run
    /// creates carry its own random id, so they never collide with an operator's tenants or
    /// another run's, and the cleanup deletes exactly them.
    static let createdProjectInfix = "-b"

    static let all: [BenchOp] = [
        BenchOp(name: "ping", key: .publicKey, request: #"{"id":{n},"op":"ping"}"#,
                about: "the cheapest round trip: framing, parsing, dispatch, answer"),
        BenchOp(name: "config.get", key: .publicKey, request: #"{"id":{n},"op":"config.get"}"#,
                about: "a read that goes through the project's actor and writes a larger answer"),
        BenchOp(name: "server.stats", key: .admin, request: #"{"id":{n},"op":"server.stats"}"#,
                about: "the operator's counters"),
        BenchOp(name: "hello", key: .publicKey, request: #"{"id":{n},"op":"hello","key":{key}}"#,
                about: "authenticating again with the public key, as a reconnecting app does"),
        // Durable writes: answered only once their log record is durable under --fsync. No
        // `"id":{n}` here: lineload fills only the first {n}, and these need theirs in the body.
        BenchOp(name: "config.put", key: .secretKey,
                request: #"{"op":"config.put","config":{"entitlements":[{"id":"e{n}"}]}}"#,
                about: "a durable write: replaces the config with one entitlement e<n> (each write differs)"),
        BenchOp(name: "project.create", key: .admin,
                request: #"{"op":"project.create","project":"{bench_project}-b{n}"}"#,
                about: "a durable write creating tenant <bench project>-b<n>; deleted at the end with --connect",
                leftovers: .createdProjects),
        BenchOp(name: "sync", key: .publicKey, request: syncRequest,
                about: "sync that finds nothing changed (a profile per connection): the SDK's poll",
                setup: syncSetup),
        BenchOp(name: "currency.transact", key: .secretKey, request: transactRequest,
                about: "a durable write: credits 1 COINS to the connection's profile under a new idempotency key",
                setup: transactSetup),
        // `{n}` three times: our generator fills every one, lineload only the first.
        BenchOp(name: "store.notify", key: .secretKey,
                request: #"{"op":"store.notify","store":"test","event":{"notification_id":"n{n}","type":"purchase","original_transaction_id":"t{n}","transaction_id":"t{n}","product_id":"pro_monthly","expires_ms":4102444800000,"price":9.99}}"#,
                about: "a durable write: the test store notifies a new subscription t<n> (held unowned); not for lineload"),
        BenchOp(name: "http.healthz", key: .publicKey, request: "",
                about: "HTTP GET /healthz: the HTTP listener's cheapest answer",
                transport: .http(method: "GET", path: "/healthz", authorized: false)),
        BenchOp(name: "http.op-sync", key: .publicKey, request: syncRequest,
                about: "HTTP POST /v1/op with the body of sync (nothing changed, a profile per connection)",
                setup: syncSetup, transport: .http(method: "POST", path: "/v1/op", authorized: true)),
        BenchOp(name: "http.op-transact", key: .secretKey, request: transactRequest,
                about: "HTTP POST /v1/op with the body of currency.transact: a durable write over HTTP",
                setup: transactSetup, transport: .http(method: "POST", path: "/v1/op", authorized: true)),
    ]

    /// `sync` and `http.op-sync` send the same request; so do the two transacts.
    private static let syncRequest = #"{"id":{n},"op":"sync","profile_id":{profile_id},"cursor":{cursor}}"#
    private static let syncSetup: Setup = { session throws(BenchFailure) in
        let document = try session.call(["op": "profile.create"])
        let profile = document["profile"]?.objectValue?["profile_id"] ?? .null
        let synced = try session.call(["op": "sync", "profile_id": profile])
        return ["profile_id": profile, "cursor": synced["cursor"] ?? .null]
    }
    private static let transactRequest =
        #"{"op":"currency.transact","profile_id":{profile_id},"currency":"COINS","amount":1,"idempotency_key":"k{n}"}"#
    private static let transactSetup: Setup = { session throws(BenchFailure) in
        let document = try session.call(["op": "profile.create"])
        return ["profile_id": document["profile"]?.objectValue?["profile_id"] ?? .null]
    }

    static func named(_ name: String) -> BenchOp? {
        all.first { $0.name == name }
    }
}
