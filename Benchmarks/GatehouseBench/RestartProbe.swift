import GatehouseBase
import GatehouseStorage
import Synchronization

/// Watches one ``Engine`` from outside, so `restart` can split `Engine.open` into its phases
/// without touching the runtime: it is both the engine's log handler (the time each event was
/// first logged) and a wrapper around its file system (the time recovery first opened a log
/// segment, the time it first wrote anything, and the time spent reading segment files).
///
/// `Engine.open` reads the manifest and the snapshots, then replays the log (reading each
/// segment whole, then checking, inflating and applying its records), then writes: it seals the
/// last segment and prepares a new one, logs `wal.opened`, builds the project actors with the
/// start-up expiry pass, and logs `recovery.done`. Those file-system calls and events are the
/// phase boundaries ``RestartProbe/Phases`` reports.
final class RestartProbe: LogHandler, Sendable {
    private struct Marks {
        var events: [String: (at: ContinuousClock.Instant, metadata: Logger.Metadata)] = [:]
        var firstSegmentOpen: ContinuousClock.Instant?
        var firstWriteAfterReplay: ContinuousClock.Instant?
        var segmentReadTime: Duration = .zero
        var segmentBytesRead = 0
    }

    private let marks = Mutex(Marks())
    /// Warnings and worse still reach stderr: a fallback snapshot or a torn tail must be seen.
    private let loud = StreamLogHandler()

    /// A logger for the engine: `info`, so the phase events arrive, none of them printed.
    var logger: Logger { Logger(label: "bench-restart", handler: self, logLevel: .info) }

    func log(_ record: GatehouseBase.LogRecord) {
        let now = ContinuousClock.now
        marks.withLock { marks in
            if marks.events[record.event] == nil { marks.events[record.event] = (now, record.metadata) }
        }
        if record.level >= .warning { loud.log(record) }
    }

    /// When `event` was first logged, and its metadata then.
    func event(_ event: String) -> (at: ContinuousClock.Instant, metadata: Logger.Metadata)? {
        marks.withLock { $0.events[event] }
    }

    fileprivate func segmentOpened() {
        let now = ContinuousClock.now
        marks.withLock { if $0.firstSegmentOpen == nil { $0.firstSegmentOpen = now } }
    }

    fileprivate func wrote() {
        let now = ContinuousClock.now
        marks.withLock { marks in
            if marks.firstSegmentOpen != nil, marks.firstWriteAfterReplay == nil { marks.firstWriteAfterReplay = now }
        }
    }

    fileprivate func segmentRead(bytes: Int, took: Duration) {
        marks.withLock {
            $0.segmentReadTime += took
            $0.segmentBytesRead += bytes
        }
    }

    /// `Engine.open` cut at the marks; each part is nil when its mark never came.
    struct Phases {
        /// Manifest, snapshot files read, checked, inflated and decoded.
        var snapshotLoad: Duration?
        /// Segments read, frames checked and inflated, records decoded and applied.
        var replay: Duration?
        /// Of `replay`: time inside `read` calls on segment files, and the bytes they read.
        var segmentReads: Duration
        var segmentBytes: Int
        /// Sealing the old segment and preparing the new one.
        var logTail: Duration?
        /// Project actors built, the start-up expiry pass logged and applied.
        var projects: Duration?
        /// Left-over snapshot files swept, the checkpointer made, until `open` returned.
        var rest: Duration?
    }

    /// The phases of an `open` that began at `start` and returned at `end`.
    func phases(from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) -> Phases {
        let marks = marks.withLock { $0 }
        let replayStart = marks.firstSegmentOpen
        let replayEnd = marks.firstWriteAfterReplay
        let walOpened = marks.events["wal.opened"]?.at
        let recovered = marks.events["recovery.done"]?.at
        func span(_ from: ContinuousClock.Instant?, _ to: ContinuousClock.Instant?) -> Duration? {
            guard let from, let to, to >= from else { return nil }
            return to - from
        }
        return Phases(
            snapshotLoad: span(start, replayStart), replay: span(replayStart, replayEnd),
            segmentReads: marks.segmentReadTime, segmentBytes: marks.segmentBytesRead,
            logTail: span(replayEnd, walOpened), projects: span(walOpened, recovered), rest: span(recovered, end)
        )
    }

    /// `base` with this probe's marks; use it as the engine's file system.
    func fileSystem(over base: any FileSystem) -> any FileSystem {
        ProbedFileSystem(base: base, probe: self)
    }
}

/// Passes every call to `base`, telling the probe about segment opens and reads and the first
/// write. Segment files are the log's `<first sequence>.wal` files.
private struct ProbedFileSystem: FileSystem {
    let base: any FileSystem
    let probe: RestartProbe

    private static func isSegment(_ path: String) -> Bool {
        path.hasSuffix(".wal") && path.contains("/wal/")
    }

    func open(_ path: String, _ mode: FileOpenMode) throws(SystemError) -> OpenFile {
        switch mode {
        case .readOnly, .readWrite:
            if Self.isSegment(path) { probe.segmentOpened() }
        case .createNew, .createOrTruncate:
            probe.wrote()
        }
        return try base.open(path, mode)
    }

    func close(_ file: OpenFile) { base.close(file) }

    func read(_ file: OpenFile, at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        guard Self.isSegment(file.path) else { return try base.read(file, at: offset, into: buffer) }
        let started = ContinuousClock.now
        let count = try base.read(file, at: offset, into: buffer)
        probe.segmentRead(bytes: count, took: ContinuousClock.now - started)
        return count
    }

    func write(_ file: OpenFile, at offset: Int, from buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        probe.wrote()
        return try base.write(file, at: offset, from: buffer)
    }

    func syncData(_ file: OpenFile) throws(SystemError) { try base.syncData(file) }
    func sync(_ file: OpenFile) throws(SystemError) { try base.sync(file) }

    func truncate(_ file: OpenFile, to size: Int) throws(SystemError) {
        probe.wrote()
        try base.truncate(file, to: size)
    }

    func allocate(_ file: OpenFile, offset: Int, length: Int) throws(SystemError) {
        probe.wrote()
        try base.allocate(file, offset: offset, length: length)
    }

    func size(of file: OpenFile) throws(SystemError) -> Int { try base.size(of: file) }
    func fileSize(atPath path: String) throws(SystemError) -> Int { try base.fileSize(atPath: path) }

    func rename(_ source: String, to destination: String) throws(SystemError) {
        probe.wrote()
        try base.rename(source, to: destination)
    }

    func unlink(_ path: String) throws(SystemError) { try base.unlink(path) }
    func listDirectory(_ path: String) throws(SystemError) -> [String] { try base.listDirectory(path) }
    func makeDirectory(_ path: String) throws(SystemError) { try base.makeDirectory(path) }
    func syncDirectory(_ path: String) throws(SystemError) { try base.syncDirectory(path) }
    func freeBytes(_ path: String) throws(SystemError) -> Int { try base.freeBytes(path) }
}
