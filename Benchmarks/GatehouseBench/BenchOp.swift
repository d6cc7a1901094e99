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

/// One thing the load mode can measure. Adding an op is one entry in ``all``.
///
/// The request template is sent over and over (see ``RequestTemplate``: `{n}` is a counter
/// unique across the run, `{key}` the connection's key, and any other `{name}` comes from
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
struct BenchOp: Sendable {
    typealias Setup = @Sendable (BenchSession) throws(BenchFailure) -> [String: JSONValue]

    let name: String
    let key: BenchKey
    let request: String
    /// One line for `--help`.
    let about: String
    let setup: Setup?

    init(name: String, key: BenchKey, request: String, about: String, setup: Setup? = nil) {
        self.name = name
        self.key = key
        self.request = request
        self.about = about
        self.setup = setup
    }

    static let all: [BenchOp] = [
        BenchOp(name: "ping", key: .publicKey, request: #"{"id":{n},"op":"ping"}"#,
                about: "the cheapest round trip: framing, parsing, dispatch, answer"),
        BenchOp(name: "config.get", key: .publicKey, request: #"{"id":{n},"op":"config.get"}"#,
                about: "a read that goes through the project's actor and writes a larger answer"),
        BenchOp(name: "server.stats", key: .admin, request: #"{"id":{n},"op":"server.stats"}"#,
                about: "the operator's counters"),
        BenchOp(name: "hello", key: .publicKey, request: #"{"id":{n},"op":"hello","key":{key}}"#,
                about: "authenticating again with the public key, as a reconnecting app does"),
    ]

    static func named(_ name: String) -> BenchOp? {
        all.first { $0.name == name }
    }
}
