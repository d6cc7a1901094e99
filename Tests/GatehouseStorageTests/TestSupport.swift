import GatehouseBase
@testable import GatehouseStorage
import GatehouseTesting
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Small, fast settings: 64 KiB segments, no disk reserve, quick free-space checks, and seeded
/// salts and ids so runs repeat.
func testOptions(_ policy: DurabilityPolicy = .always, seed: UInt64 = 1) -> WALOptions {
    var options = WALOptions(policy: policy)
    options.segmentBytes = 64 << 10
    options.diskReserveBytes = 0
    options.freeSpaceCheckInterval = .milliseconds(20)
    options.everysecInterval = .milliseconds(50)
    options.random = SeededRandomSource(seed: seed)
    return options
}

let walDirectory = "/data/wal"

/// The record appended at `lsn` in these tests: its payload starts with the LSN and goes on with
/// noise seeded by it (incompressible, so segments fill), so a replay can be checked against
/// what was appended without keeping a copy.
func testRecord(_ lsn: LSN, size: Int? = nil) -> WALRecord {
    let count = size ?? Int(lsn % 97) + 8
    var payload = [UInt8]()
    payload.reserveCapacity(count)
    withUnsafeBytes(of: lsn.littleEndian) { payload.append(contentsOf: $0.prefix(min(8, count))) }
    if count > payload.count { payload += SeededRandomSource(seed: lsn).randomBytes(count: count - payload.count) }
    return WALRecord(kind: UInt16(lsn % 5), payload: payload)
}

/// Counts `onFatal` calls.
final class FatalRecorder: Sendable {
    private let errors = Mutex<[StorageError]>([])

    var onFatal: @Sendable (StorageError) -> Void {
        { [self] error in errors.withLock { $0.append(error) } }
    }

    var count: Int { errors.withLock { $0.count } }
    var all: [StorageError] { errors.withLock { $0 } }
}

/// A log opened for a test, with what recovery replayed.
struct OpenedLog: Sendable {
    let log: WriteAheadLog
    let report: RecoveryReport
    let replayed: [(lsn: LSN, record: WALRecord)]
    let fatal: FatalRecorder

    var replayedLSNs: [LSN] { replayed.map(\.lsn) }
}

func openLog(
    _ fileSystem: any FileSystem,
    _ options: WALOptions = testOptions(),
    directory: String = walDirectory,
    replayFrom: LSN = 1,
    logger: Logger = .disabled
) throws -> OpenedLog {
    var replayed: [(LSN, WALRecord)] = []
    let fatal = FatalRecorder()
    let (log, report) = try WriteAheadLog.open(
        directory: directory, fileSystem: fileSystem, options: options, replayFrom: replayFrom,
        logger: logger, onFatal: fatal.onFatal
    ) { lsn, record in replayed.append((lsn, record)) }
    return OpenedLog(log: log, report: report, replayed: replayed, fatal: fatal)
}

/// Checks that a replay holds exactly `testRecord(lsn)` for each LSN from `first` through `last`.
/// ``openLog(_:_:directory:replayFrom:logger:)`` on the real disk, where recovery waits on
/// fsyncs: off the concurrency pool.
func openLogOnTheRealDisk(_ options: WALOptions = testOptions(), directory: String) async throws -> OpenedLog {
    try await offThePool { try openLog(NativeFileSystem(), options, directory: directory) }
}

func expectReplay(_ opened: OpenedLog, from first: LSN, through last: LSN, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(opened.replayedLSNs == Array(first...max(first, last)).filter { $0 <= last }, sourceLocation: sourceLocation)
    for (lsn, record) in opened.replayed where record != testRecord(lsn) {
        Issue.record("record \(lsn) came back different", sourceLocation: sourceLocation)
        break
    }
}

/// Appends `testRecord`s for LSNs `first...last`, one append each, and returns the last LSN.
@discardableResult
func appendTestRecords(_ log: WriteAheadLog, _ lsns: ClosedRange<LSN>) throws -> LSN {
    var last: LSN = 0
    for lsn in lsns {
        last = try log.append(testRecord(lsn))
        #expect(last == lsn)
    }
    return last
}

/// Segment files in a directory of a FaultyFileSystem, oldest first.
func segmentNames(_ fileSystem: FaultyFileSystem, _ directory: String = walDirectory) -> [String] {
    fileSystem.names(in: directory).filter { $0.hasSuffix(".wal") }.sorted()
}

/// Whether long randomized runs were asked for (GATEHOUSE_SOAK=1).
var soak: Bool { getenv("GATEHOUSE_SOAK").map { String(cString: $0) == "1" } ?? false }
