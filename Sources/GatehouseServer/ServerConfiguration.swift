public import GatehouseBase
public import GatehousePosix

/// When a write's answer may go out, relative to its log record reaching the disk
/// (DESIGN.md, "Durability and recovery").
public enum FsyncPolicy: String, Sendable, CaseIterable {
    /// fdatasync before answering, shared by a group of writes. The default.
    case always
    /// Answer after write(2); fdatasync about once a second.
    case everysec
    /// Never fdatasync; for benchmarks only.
    case none
}

/// Everything `gatehouse serve` can be told, with the defaults a newcomer gets.
public struct ServerConfiguration: Sendable {
    public var dataDirectory = "./gatehouse-data"
    public var listen = HostPort(host: "127.0.0.1", port: 7411)
    /// The operator's key. `nil`: read `<data-dir>/admin.key`, generating it on first start.
    public var adminKey: String?
    public var fsync = FsyncPolicy.always
    /// The longest request line accepted, terminator excluded (PROTOCOL.md: default 1 MiB).
    public var lineBytesMax = 1 << 20
    public var connectionsMax = 10_000
    /// A connection that sends nothing and awaits nothing for this long is closed; `nil`: never.
    public var idleTimeout: Duration? = .seconds(300)
    /// Freeze the clock at start-up and let `clock.advance` move it (tests and demos).
    public var testClock = false
    public var logLevel = Logger.Level.info
    public var logFormat = LogFormat.text

    /// Requests read but not yet answered, per connection; past it the server stops reading
    /// from that connection until answers drain (backpressure).
    public var inFlightRequestsMax = 1024
    /// Answer bytes queued for a connection past which the server stops reading its requests.
    public var outputBytesHighWater = 1 << 20
    /// Answer bytes queued past which a connection that is not reading is dropped (pushes
    /// could otherwise grow without bound).
    public var outputBytesMax = 16 << 20
    /// Threads running event loops; each owns a share of the connections.
    public var ioThreads = 1
    /// How long SIGTERM waits for in-flight answers before closing connections anyway.
    public var shutdownGrace: Duration = .seconds(10)

    public init() {}
}
