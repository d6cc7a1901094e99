public import GatehouseBase
public import GatehouseCore
public import GatehouseOutbound
public import GatehousePosix
public import GatehouseStorage

/// Everything `gatehouse serve` can be told, with the defaults a newcomer gets.
public struct ServerConfiguration: Sendable {
    public var dataDirectory = "./gatehouse-data"
    /// The only directory `tenant.snapshot` writes to and `tenant.restore` reads from; `nil`:
    /// `<data-dir>/exports`.
    public var exportsDirectory: String?
    public var listen = HostPort(host: "127.0.0.1", port: 7411)
    /// The HTTP listener (HTTP.md), on the same loops; `nil`: none (`--http=off`).
    public var http: HostPort? = HostPort(host: "127.0.0.1", port: 7412)
    /// The largest HTTP request body taken (`--http-max-body`); more is 413.
    public var httpBodyBytesMax = 1 << 20
    /// An HTTP request whose headers are not complete this long after its first byte is 408.
    public var httpHeaderTimeout: Duration = .seconds(10)
    /// A keep-alive HTTP connection silent this long between requests is closed.
    public var httpIdleTimeout: Duration = .seconds(60)
    /// `GET /metrics` answers without the admin key (`--metrics-public`).
    public var metricsPublic = false
    /// The address the world reaches the HTTP listener at, through the TLS proxy
    /// (`--public-url`), for the links the server writes.
    public var publicURL: String?
    /// The operator's key. `nil`: read `<data-dir>/admin.key`, generating it on first start.
    public var adminKey: String?
    /// When a write's answer may go out relative to its log record reaching the disk:
    /// `always` (fdatasync first, shared by a group of writes), `everysec`, `none`.
    public var fsync = DurabilityPolicy.always
    /// The longest request line accepted, terminator excluded (PROTOCOL.md: default 1 MiB).
    public var lineBytesMax = 1 << 20
    public var connectionsMax = 10_000
    /// A connection that sends nothing and awaits nothing for this long is closed; `nil`: never.
    /// Before its first successful `hello`, bytes it sends do not count as activity.
    public var idleTimeout: Duration? = .seconds(300)
    /// A connection that has not said `hello` successfully this long after it was accepted is
    /// closed, whatever it sends meanwhile (`--hello-timeout`).
    public var helloTimeout: Duration = .seconds(10)
    /// The longest request line before the first successful `hello`: an unauthenticated client
    /// cannot make the server hold more than this for it.
    public var unauthenticatedLineBytesMax = 16 * 1024
    /// Bytes buffered for all connections together, requests read but not yet framed and
    /// answers not yet sent (`--max-buffered-bytes`). Past it, the connections holding the most
    /// unauthenticated input are closed first, then those holding the most bytes.
    public var bufferedBytesMax = 256 << 20
    /// The clock connections count their deadlines in (tests move their own).
    public var connectionClock: any ConnectionClock = MonotonicConnectionClock()
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

    /// Size of a log segment file.
    public var walSegmentBytes = 64 << 20
    /// Free disk space under which writes are refused (`read_only`); `nil`: two segments.
    public var diskReserveBytes: Int?
    /// Payload bytes a project may log before it is snapshotted on its own.
    public var snapshotAfterLoggedBytes = 64 << 20
    /// What every project keeps of what grows with its write rate: the event feed, each
    /// currency's history, idempotency keys (`--feed-max-events`, `--history-per-currency`,
    /// `--idempotency-hours`).
    public var retention = Retention.standard
    /// The file system under the data directory (tests put a faulty one here).
    public var fileSystem: any FileSystem = NativeFileSystem()
    /// On a failed log write or fsync, stop the process at once with exit code 4 (fail-stop).
    /// Only in-process tests turn this off; the server then refuses every write instead.
    public var exitOnStorageFailure = true
    /// The roots App Store signed data must chain to, as DER certificates (`--app-store-root`).
    /// `nil`: Apple Root CA - G3, built in, which is what production needs; sandboxes and tests
    /// name their own.
    public var appStoreRootCertificates: [[UInt8]]?
    /// Where requests to the App Store Server API go, for production and sandbox data alike
    /// (`--app-store-api-url`); `nil`: Apple's hosts.
    public var appStoreAPIBaseURL: String?
    /// How a request to the App Store Server API is retried, and how long each attempt may take
    /// (tests shorten both).
    public var appStoreAPIRetryPolicy = RetryPolicy()
    public var appStoreAPIRequestTimeout: Duration = .seconds(15)
    /// What those retries wait on (tests pass one that skips the waits).
    public var appStoreAPIRetryClock: any RetryClock = SystemRetryClock()
    /// Webhooks and pushes may go to `http://` and to loopback, private and link-local
    /// addresses (`--outbound-allow-private`: tests, and receivers on a private network).
    public var outboundAllowPrivate = false
    /// How long one delivery attempt may take before it counts as failed (`--outbound-timeout`;
    /// DESIGN.md: a 2xx within 30 s).
    public var outboundTimeout: Duration = .milliseconds(DeliverySchedule.attemptTimeoutMs)
    /// The SMTP server redemption links' emails go through (`--smtp`, `--smtp-from`,
    /// `--smtp-credentials`, `--smtp-insecure`); `nil`: no email is sent, and what is owed stays
    /// owed. Needs ``publicURL``, the base of the email's https link.
    public var smtp: SMTPSettings?
    /// Stripe's API, which purchase links make Checkout Sessions with (`--stripe-api-url`: tests
    /// point it at a local fake).
    public var stripeAPIURL = "https://api.stripe.com"

    public init() {}
}
