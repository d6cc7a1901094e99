import GatehouseAppStore
public import GatehouseBase
import GatehouseCore
import GatehouseOutbound
public import GatehousePosix
public import GatehouseRuntime
import GatehouseStorage
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The Gatehouse server: listens, runs the event loops, and owns the projects.
///
/// `start()` binds and starts serving; `shutdown()` stops accepting, lets in-flight requests
/// finish, and closes connections; `waitUntilStopped()` returns once all of that is done.
public final class Server: Sendable {
    public let configuration: ServerConfiguration
    /// The address actually bound (the real port when the configuration asked for port 0).
    public let address: HostPort
    /// The HTTP listener's address, when there is one.
    public let httpAddress: HostPort?
    /// Where the admin key came from, for the start-up message.
    public let adminKeySource: AdminKeySource
    /// The projects and the log behind them, recovered from the data directory at start.
    public let engine: Engine
    private let core: ServerCore
    private let dataLock: DataDirectoryLock
    private let loops: [ServerLoop]
    /// The line listener's, then the HTTP listener's when there is one.
    private let acceptors: [Acceptor]
    private let state = Mutex(State.running)
    private let stopped = Mutex<[CheckedContinuation<Void, Never>]?>([])

    private enum State {
        case running
        case shuttingDown
        case stopped
    }

    public enum AdminKeySource: Sendable, Equatable {
        case given
        case file(path: String, generated: Bool)
    }

    /// Prepares the data directory and admin key, recovers the projects from disk, binds the
    /// listening socket and starts serving.
    public init(configuration: ServerConfiguration, logger: Logger, random: any RandomSource = SystemRandomSource())
        throws(GatehouseStartupError)
    {
        self.configuration = configuration
        if configuration.smtp != nil, configuration.publicURL == nil {
            throw GatehouseStartupError("--smtp needs --public-url: the email's link is <public url>/pay/r/<token>")
        }
        let appStoreVerifier = try Self.makeAppStoreVerifier(configuration)
        let directory = try DataDirectory.prepare(configuration.dataDirectory)
        dataLock = try directory.lock()
        let adminKey: String
        if let given = configuration.adminKey {
            adminKey = given
            adminKeySource = .given
        } else {
            let (key, generated) = try directory.loadOrCreateAdminKey(random: random)
            adminKey = key
            adminKeySource = .file(path: directory.adminKeyPath, generated: generated)
        }
        let systemClock = SystemServerClock()
        let manualClock = configuration.testClock ? ManualServerClock(startMs: systemClock.nowMs()) : nil
        let engine = try Self.openEngine(configuration, adminKey: adminKey, clock: manualClock ?? systemClock,
                                         random: random, logger: logger)
        self.engine = engine
        let core = ServerCore(configuration: configuration, engine: engine, manualClock: manualClock, logger: logger,
                              appStoreVerifier: appStoreVerifier)
        self.core = core

        var listeners: [(Socket, ListenerKind)] = []
        do throws(GatehouseStartupError) {
            for (address, kind) in [(configuration.listen, ListenerKind.line)] + (configuration.http.map { [($0, .http)] } ?? []) {
                do {
                    listeners.append((try Socket.listen(on: SocketAddress.resolve(address)), kind))
                } catch {
                    throw GatehouseStartupError("cannot listen on \(address): \(error)")
                }
            }
            address = try Self.boundAddress(listeners[0].0)
            httpAddress = try listeners.count > 1 ? Self.boundAddress(listeners[1].0) : nil
        } catch {
            for (listener, _) in listeners { listener.close() }
            Task { await engine.close() }
            throw error
        }
        var loops: [ServerLoop] = []
        do {
            for index in 0..<max(1, configuration.ioThreads) {
                loops.append(ServerLoop(loop: try EventLoop(name: "io-\(index)"), index: index, core: core))
            }
        } catch {
            for (listener, _) in listeners { listener.close() }
            throw GatehouseStartupError("cannot create event loops: \(error)")
        }
        self.loops = loops
        self.acceptors = listeners.map { Acceptor(socket: $0.0, kind: $0.1, loops: loops, core: core) }
        start()
        logger.info("server.listening", metadata: [
            "address": "\(address)", "http": "\(httpAddress.map { "\($0)" } ?? "off")", "fsync": "\(configuration.fsync.rawValue)",
            "data_dir": "\(configuration.dataDirectory)", "test_clock": "\(configuration.testClock)",
            "smtp": "\(configuration.smtp.map { "\($0)" } ?? "off")",
        ])
    }

    private static func boundAddress(_ listener: Socket) throws(GatehouseStartupError) -> HostPort {
        do {
            return try listener.localAddress().hostPort
        } catch {
            throw GatehouseStartupError("cannot read the address a listener is bound to: \(error)")
        }
    }

    /// The App Store verifier over the configured roots, or Apple Root CA - G3 when none are.
    private static func makeAppStoreVerifier(_ configuration: ServerConfiguration) throws(GatehouseStartupError)
        -> AppStoreVerifier
    {
        guard let roots = configuration.appStoreRootCertificates else { return AppStoreVerifier() }
        do {
            return try AppStoreVerifier(rootCertificates: roots)
        } catch {
            throw GatehouseStartupError("cannot use the App Store root certificates: \(error)")
        }
    }

    private static func openEngine(
        _ configuration: ServerConfiguration, adminKey: String, clock: any ServerClock, random: any RandomSource, logger: Logger
    ) throws(GatehouseStartupError) -> Engine {
        var wal = WALOptions(policy: configuration.fsync)
        wal.segmentBytes = configuration.walSegmentBytes
        wal.diskReserveBytes = configuration.diskReserveBytes ?? 2 * configuration.walSegmentBytes
        var options = EngineOptions(wal: wal)
        options.snapshotAfterLoggedBytes = configuration.snapshotAfterLoggedBytes
        options.retention = configuration.retention
        options.exportsDirectory = configuration.exportsDirectory
        let exitOnFailure = configuration.exitOnStorageFailure
        do {
            return try Engine.open(
                dataDirectory: configuration.dataDirectory, fileSystem: configuration.fileSystem, options: options,
                adminKey: adminKey, clock: clock, random: random, logger: logger
            ) { error in
                // fsyncgate: memory may now hold changes that never reached the disk. Stop at once,
                // answer nothing more; the next start recovers from what is on disk.
                logger.critical("server.stopping_on_storage_failure", metadata: ["error": "\(error)", "exit_code": "4"])
                if exitOnFailure { _exit(GatehouseCommand.ExitCode.storageFailure) }
            }
        } catch {
            let directory = configuration.dataDirectory
            throw GatehouseStartupError(
                "cannot recover \(directory): \(error)\n"
                    + "The server did not start. `gatehouse wal verify --data-dir=\(directory)` shows the damage; "
                    + "`gatehouse wal repair --data-dir=\(directory)` backs the log up and cuts it there "
                    + "(docs/operations.md, \"Recovering\")."
            )
        }
    }

    private func start() {
        ProcessSignals.ignoreBrokenPipes()
        for serverLoop in loops {
            serverLoop.loop.start()
            serverLoop.loop.execute { serverLoop.startTimers() }
        }
        let first = loops[0]
        let acceptors = self.acceptors
        let core = self.core
        first.loop.execute {
            for acceptor in acceptors {
                do {
                    try acceptor.register(on: first.loop)
                } catch {
                    core.logger.critical("server.accept_register_failed", metadata: ["error": "\(error)"])
                }
            }
            first.loop.scheduleRepeating(every: .seconds(1)) { core.stats.sample() }
        }
        let engine = self.engine
        Task { await core.deliverer.start(engine: engine) }
    }

    /// Stops accepting, answers what is in flight, closes every connection, stops the loops.
    /// Safe to call more than once and from any thread; returns when the server has stopped.
    public func shutdown() async {
        let first = state.withLock { state -> Bool in
            guard case .running = state else { return false }
            state = .shuttingDown
            return true
        }
        guard first else {
            await waitUntilStopped()
            return
        }
        core.logger.info("server.stopping")
        core.beginStopping()
        let acceptors = self.acceptors
        let firstLoop = loops[0].loop
        firstLoop.execute {
            for acceptor in acceptors { acceptor.close(on: firstLoop) }
        }
        for serverLoop in loops {
            serverLoop.loop.execute { serverLoop.beginShutdown() }
        }
        let deadline = ContinuousClock.now + configuration.shutdownGrace
        while core.stats.openConnections > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        for serverLoop in loops {
            serverLoop.loop.execute { serverLoop.closeAll() }
            serverLoop.loop.stop()
        }
        for serverLoop in loops {
            serverLoop.loop.waitUntilStopped()
        }
        // Deliveries under way stop unlogged (they go again after a restart), and ops still
        // waiting on Apple fail now, rather than write after the engine has closed.
        await core.deliverer.close(engine: engine)
        await core.outbound.close()
        await engine.close()
        dataLock.release()
        core.logger.info("server.stopped")
        state.withLock { $0 = .stopped }
        let waiters = stopped.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            defer { waiters = nil }
            return waiters ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once ``shutdown()`` has finished.
    public func waitUntilStopped() async {
        await withCheckedContinuation { continuation in
            let alreadyStopped = stopped.withLock { waiters -> Bool in
                guard waiters != nil else { return true }
                waiters!.append(continuation)
                return false
            }
            if alreadyStopped { continuation.resume() }
        }
    }
}
