public import GatehouseBase
public import GatehouseCore
public import GatehouseStorage

/// Settings of the runtime's storage side.
public struct EngineOptions: Sendable {
    public var wal: WALOptions
    /// Payload bytes a project may log before it is snapshotted on its own.
    public var snapshotAfterLoggedBytes = 64 << 20
    /// Log bytes on disk past which the project holding the oldest segment is snapshotted, so
    /// one cold project cannot keep the whole log alive.
    public var walBytesCap = 1 << 30
    /// What every project keeps of its feed, histories and idempotency keys.
    public var retention = Retention.standard
    /// Where `tenant.snapshot` writes and `tenant.restore` reads; `nil`: `<data-dir>/exports`.
    public var exportsDirectory: String?

    public init(wal: WALOptions) {
        self.wal = wal
    }
}

/// The runtime as the server sees it: the projects, the log behind them, and the checkpointer.
/// ``open(dataDirectory:fileSystem:options:adminKey:clock:random:logger:onFatal:)`` recovers the
/// state from disk before anything is served.
public final class Engine: Sendable {
    public let registry: Registry
    public let checkpointer: Checkpointer
    public let log: WriteAheadLog
    public let report: RecoveryReport
    let paths: DataPaths
    let fileSystem: any FileSystem
    let io: BlockingIO

    init(registry: Registry, checkpointer: Checkpointer, log: WriteAheadLog, report: RecoveryReport, paths: DataPaths,
         fileSystem: any FileSystem, io: BlockingIO)
    {
        self.registry = registry
        self.checkpointer = checkpointer
        self.log = log
        self.report = report
        self.paths = paths
        self.fileSystem = fileSystem
        self.io = io
    }

    /// Loads the newest good snapshots named by the manifest, replays the log after them, and
    /// answers a running engine. Damage it must not guess at throws, naming the file.
    public static func open(
        dataDirectory: String, fileSystem: any FileSystem, options: EngineOptions, adminKey: String,
        clock: any ServerClock, random: any RandomSource, logger: Logger,
        onFatal: @escaping @Sendable (StorageError) -> Void
    ) throws -> Engine {
        let paths = DataPaths(root: dataDirectory, exports: options.exportsDirectory)
        for directory in [paths.wal, paths.snapshots, paths.exports] {
            try fileSystem.makeDirectoriesDurably(directory)
        }
        let manifest = try ManifestFile.read(directory: paths.root, fileSystem: fileSystem)
        var options = options
        // The log must belong to the same database as the manifest: a swapped `wal/` is refused.
        options.wal.databaseID = manifest?.databaseID
        var recovery = try RecoveryState(manifest: manifest, paths: paths, fileSystem: fileSystem, retention: options.retention,
                                         logger: logger)
        let (log, report) = try WriteAheadLog.open(
            directory: paths.wal, fileSystem: fileSystem, options: options.wal,
            replayFrom: manifest?.replayFromLSN ?? 1, logger: logger, onFatal: onFatal,
            // Records decode on the log reader's thread while the ones before them are applied;
            // the memory a record will need is asked for some records before its turn.
            prepare: RecoveryState.decode
        ) { records in
            try Pipeline.Lookahead.forEach(records, look: { recovery.prefetch(for: $0.record, $1) }) { lsn, decoded in
                try recovery.apply(lsn: lsn, decoded)
            }
        }
        let trigger = SnapshotTrigger(loggedBytesThreshold: options.snapshotAfterLoggedBytes)
        let context = ProjectContext(log: log, trigger: trigger, clock: clock, random: random, retention: options.retention,
                                     outboxHook: OutboxHook())
        let projects = try recovery.projects(context: context)
        let registry = Registry(adminKey: adminKey, context: context, logger: logger, projects: projects,
                                nextIncarnation: recovery.nextIncarnation)
        let io = BlockingIO(label: "gatehouse.snapshot-io")
        let checkpointer = Checkpointer(paths: paths, fileSystem: fileSystem, log: log, registry: registry, io: io,
                                        logger: logger, retained: recovery.retained, walBytesCap: options.walBytesCap)
        trigger.install { [weak checkpointer] project in
            guard let checkpointer else { return }
            Task { await checkpointer.snapshotSoon(project) }
        }
        try recovery.removeOrphans(fileSystem: fileSystem)
        logger.info("recovery.done", metadata: [
            "projects": "\(projects.count)", "records_replayed": "\(report.recordsReplayed)", "last_lsn": "\(log.lastLSN)",
        ])
        return Engine(registry: registry, checkpointer: checkpointer, log: log, report: report, paths: paths,
                      fileSystem: fileSystem, io: io)
    }

    /// Where projects hand their outboxes for delivery (the server installs the deliverer).
    public var outboxHook: OutboxHook { registry.projectContext.outboxHook }

    /// Stops taking writes and makes everything written durable (clean shutdown).
    public func close() async {
        registry.trigger.install(nil)
        // The expiry timers stop: nothing is logged once the log closes, and a timer asleep on
        // a test clock would otherwise wait forever.
        for project in registry.allProjects() { await project.stopExpiryTimer() }
        await log.close()
    }
}

/// The state being rebuilt during recovery, before any actor exists.
struct RecoveryState {
    /// A project being rebuilt. A class: applying a record to it, or looking ahead at one,
    /// reaches its state in place, where a dictionary of structs hands out a copy of the whole
    /// entry (a retain and a release of every buffer of the state) on a read, and even a
    /// mutation through `values[index]` copied the entry out and back.
    final class Loaded {
        // Only the replay's thread touches it, one access at a time.
        @exclusivity(unchecked) private(set) var state: ProjectState
        /// Changes at or below this were already in the snapshot.
        let baseLSN: LSN
        private(set) var lastLSN: LSN
        /// The body of the snapshot it was loaded from (0 for a project the log created), which
        /// sets when the project is next snapshotted (``SnapshotTrigger``).
        let snapshotBodyBytes: Int

        init(state: ProjectState, baseLSN: LSN, lastLSN: LSN, snapshotBodyBytes: Int = 0, retention: Retention) {
            self.state = state
            self.state.retention = retention
            self.baseLSN = baseLSN
            self.lastLSN = lastLSN
            self.snapshotBodyBytes = snapshotBodyBytes
        }

        /// See ``RecoveryState/prefetch(for:_:)``.
        func prefetch(for batch: ProjectState.ChangeBatch, _ distance: Pipeline.Lookahead) {
            switch distance {
            case .far: state.prefetchBuckets(for: batch)
            case .near: state.prefetchProfiles(for: batch)
            }
        }

        /// Applies a replayed change the snapshot does not already hold.
        func apply(_ batch: ProjectState.ChangeBatch, at lsn: LSN) {
            guard lsn > baseLSN else { return }
            state.apply(batch)
            lastLSN = lsn
        }
    }

    private(set) var loaded: [Incarnation: Loaded] = [:]
    private(set) var retained: [Incarnation: [Checkpointer.RetainedSnapshot]] = [:]
    private(set) var nextIncarnation: Incarnation = 1
    /// Snapshot files a replayed restore record names: they must not be swept as orphans.
    private var restoreFiles: Set<String> = []
    private let paths: DataPaths
    private let fileSystem: any FileSystem
    /// What the replayed projects keep (their states are replayed under it).
    private let retention: Retention
    private let logger: Logger

    init(manifest: Manifest?, paths: DataPaths, fileSystem: any FileSystem, retention: Retention, logger: Logger) throws {
        self.paths = paths
        self.fileSystem = fileSystem
        self.retention = retention
        self.logger = logger
        guard let manifest else { return }
        if !manifest.runtimeMetadata.isEmpty {
            var reader = ByteReader(manifest.runtimeMetadata)
            nextIncarnation = try reader.readVarUInt()
        }
        let byIncarnation = Dictionary(grouping: manifest.snapshots, by: \.streamID)
        for (incarnation, entries) in byIncarnation {
            try loadNewestGood(incarnation, entries.sorted { $0.lsn > $1.lsn })
        }
    }

    /// The newest snapshot of an incarnation that reads back whole; an older one when the newest
    /// is damaged (the log reaches back to the older one, see ``Checkpointer``).
    private mutating func loadNewestGood(_ incarnation: Incarnation, _ entries: [ManifestEntry]) throws {
        var problems: [String] = []
        for (index, entry) in entries.enumerated() {
            do {
                let (header, body) = try SnapshotFile.read(path: paths.snapshots + "/" + entry.file, fileSystem: fileSystem)
                let state = try StateCoding.decode(body)
                // A staged restore is written before its log position exists: stream 0, position 0.
                let staged = header.streamID == 0 && header.lsn == 0
                guard staged || header.lsn == entry.lsn else {
                    throw RecoveryError("\(entry.file) covers \(header.lsn), the manifest says \(entry.lsn)")
                }
                loaded[incarnation] = Loaded(state: state, baseLSN: entry.lsn, lastLSN: entry.lsn, snapshotBodyBytes: body.count,
                                             retention: retention)
                retained[incarnation] = entries[index...].map { Checkpointer.RetainedSnapshot(file: $0.file, lsn: $0.lsn) }
                if !problems.isEmpty {
                    logger.warning("recovery.snapshot_fallback", metadata: ["file": "\(entry.file)", "skipped": "\(problems.joined(separator: "; "))"])
                }
                return
            } catch {
                problems.append("\(entry.file): \(error)")
            }
        }
        throw RecoveryError("""
            no usable snapshot for incarnation \(incarnation): \(problems.joined(separator: "; ")). \
            Restore the tenant from an export (gatehouse tenant restore), or move the damaged files aside to start without it.
            """)
    }

    /// A decoded record as replay carries it from the log reader's thread to the applier: a
    /// project's change batch (nearly every record) inline, anything else boxed. A
    /// `RuntimeRecord` is as big as its biggest case, a whole project state (about 650 bytes),
    /// and replay copies each record several times on its way.
    enum Replayed {
        case changed(Incarnation, ProjectState.ChangeBatch)
        indirect case other(RuntimeRecord)
    }

    /// A log record as the runtime reads it. Pure: recovery runs it ahead, on the log reader's thread.
    static func decode(lsn: LSN, record: WALRecord) throws -> Replayed {
        let decoded: RuntimeRecord
        do {
            decoded = try RuntimeRecord(record)
        } catch {
            throw RecoveryError("log record \(lsn) (kind \(record.kind)) cannot be read: \(error)")
        }
        guard case .projectChanged(let incarnation, let batch) = decoded else { return .other(decoded) }
        return .changed(incarnation, batch)
    }

    /// Asks memory for what applying `decoded` will read (``ProjectState/prefetchBuckets(for:)``),
    /// some records before its turn: buckets `far` ahead, the profiles they name `near`.
    /// Changes nothing: `mutating` only so that replay's closure, which holds the recovery
    /// state, reaches it in place (a plain read copies it, a retain and release of all it holds).
    mutating func prefetch(for replayed: Replayed, _ distance: Pipeline.Lookahead) {
        guard case .changed(let incarnation, let batch) = replayed else { return }
        loaded[incarnation]?.prefetch(for: batch, distance)
    }

    /// Applies one decoded record, in log order.
    mutating func apply(lsn: LSN, _ replayed: Replayed) throws {
        switch replayed {
        case .changed(let incarnation, let batch):
            applyChange(batch, of: incarnation, at: lsn)
        case .other(let decoded):
            try apply(lsn: lsn, decoded)
        }
    }

    /// A project's change batch, however it reached the applier.
    private mutating func applyChange(_ batch: ProjectState.ChangeBatch, of incarnation: Incarnation, at lsn: LSN) {
        nextIncarnation = max(nextIncarnation, incarnation + 1)
        // A change for an incarnation deleted before the replay start is simply past.
        loaded[incarnation]?.apply(batch, at: lsn)
    }

    /// Applies one decoded record, in log order.
    private mutating func apply(lsn: LSN, _ decoded: RuntimeRecord) throws {
        nextIncarnation = max(nextIncarnation, decoded.incarnation + 1)
        switch decoded {
        case .projectCreated(let incarnation, let state):
            guard loaded[incarnation] == nil else { return }
            loaded[incarnation] = Loaded(state: state, baseLSN: lsn, lastLSN: lsn, retention: retention)
        case .projectDeleted(let incarnation):
            loaded[incarnation] = nil
            retained[incarnation] = nil
        case .projectRestored(let incarnation, let file, let replacing):
            if let replacing {
                loaded[replacing] = nil
                retained[replacing] = nil
            }
            restoreFiles.insert(file)
            guard loaded[incarnation] == nil else { return }
            let (_, body) = try SnapshotFile.read(path: paths.snapshots + "/" + file, fileSystem: fileSystem)
            loaded[incarnation] = Loaded(state: try StateCoding.decode(body), baseLSN: lsn, lastLSN: lsn, snapshotBodyBytes: body.count,
                                         retention: retention)
            retained[incarnation] = [Checkpointer.RetainedSnapshot(file: file, lsn: lsn)]
        case .projectChanged(let incarnation, let batch):
            // ``decode(lsn:record:)`` carries these inline (`.changed`); one boxed is the same change.
            applyChange(batch, of: incarnation, at: lsn)
        }
    }

    /// Actors for every live project; two live projects with one id is damage.
    func projects(context: ProjectContext) throws -> [Project] {
        var seen: [ProjectID: Incarnation] = [:]
        var projects: [Project] = []
        for (incarnation, entry) in loaded.sorted(by: { $0.key < $1.key }) {
            if let other = seen[entry.state.id] {
                throw RecoveryError("project \(entry.state.id) appears twice (incarnations \(other) and \(incarnation))")
            }
            seen[entry.state.id] = incarnation
            var state = entry.state
            var lastLSN = entry.lastLSN
            // What fell due while the server was down is applied before anything is served.
            do {
                for expired in state.expiryBatches(nowMs: context.clock.nowMs()) {
                    lastLSN = try context.log.append(RuntimeRecord.projectChanged(incarnation, expired).logRecord)
                    state.apply(expired)
                }
            } catch {
                // The log takes no writes yet (disk full): the project's timer retries.
                logger.warning("recovery.expiry_deferred", metadata: ["project": "\(state.id)", "error": "\(error)"])
            }
            let project = Project(state: state, incarnation: incarnation, originLSN: entry.baseLSN, lastLSN: lastLSN,
                                  context: context, snapshotBodyBytes: entry.snapshotBodyBytes)
            projects.append(project)
            // The timer for what falls due next.
            Task { await project.runExpiries() }
        }
        return projects
    }

    /// Snapshot files no manifest entry or restore record names are left from a crash mid-step.
    func removeOrphans(fileSystem: any FileSystem) throws {
        let keep = Set(retained.values.flatMap { $0.map(\.file) }).union(restoreFiles)
        for name in try fileSystem.listDirectory(paths.snapshots) where !keep.contains(name) {
            if name.hasSuffix(".snap") || name.hasSuffix(".tmp") {
                try? fileSystem.unlink(paths.snapshots + "/" + name)
            }
        }
    }
}

/// Recovery found something it must not guess at.
public struct RecoveryError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
