import Dispatch
import GatehouseStorage

/// How fast a start-up gets through the log: N records of about 100 bytes are written (in
/// frames of ``DurabilityOptions/replayRecordsPerFrame`` records, as a group commit makes them),
/// the log is closed, and then `WriteAheadLog.open` is timed while it checks every frame and
/// hands every record to the replay callback. The files were just written, so they are read
/// from the page cache: this measures checking and decoding, not the disk.
enum LogReplayBench {
    struct Result: Sendable {
        let records: Int
        let recordsPerFrame: Int
        /// Frame bodies before compression (record headers included), and as written.
        let rawBytes: Int
        let storedBytes: Int
        let segments: Int
        /// `open` from call to return: recovery, replay, and preparing the next segment.
        let openSeconds: Double
        /// From the call to the last record handed to the replay callback.
        let replaySeconds: Double
        let writeSeconds: Double

        var recordsPerSecond: Double { Double(records) / openSeconds }
    }

    static func measure(_ options: DurabilityOptions) throws(BenchFailure) -> Result {
        let directory = try ScratchDirectory.make(in: options.parentDirectory)
        defer { ScratchDirectory.remove(directory) }
        let written = try write(options, into: directory)

        let fatal = BenchLog.FatalError()
        var replayed = 0
        var payloadBytes = 0
        var lastRecordAt: UInt64 = 0
        let start = LoadTimeline.now()
        let (log, report) = try BenchLog.open(directory, policy: .none, fatal: fatal) { _, record in
            replayed += 1
            payloadBytes += record.payload.count
            lastRecordAt = LoadTimeline.now()
        }
        let opened = LoadTimeline.now()
        BenchLog.close(log)
        if let failure = fatal.failure { throw failure }
        guard replayed == options.replayRecords, report.recordsReplayed == replayed, report.tornTail == nil else {
            throw BenchFailure("replay handed over \(replayed) of \(options.replayRecords) records (torn tail: \(report.tornTail != nil))")
        }
        guard payloadBytes == options.replayRecords * recordBytes else {
            throw BenchFailure("replay handed over \(payloadBytes) payload bytes, expected \(options.replayRecords * recordBytes)")
        }
        return Result(
            records: replayed, recordsPerFrame: options.replayRecordsPerFrame, rawBytes: written.rawBytesWritten,
            storedBytes: written.bytesWritten, segments: report.segments,
            openSeconds: Double(opened - start) / 1e9, replaySeconds: Double(lastRecordAt - start) / 1e9,
            writeSeconds: written.seconds
        )
    }

    static let recordBytes = 100

    private struct Written {
        let rawBytesWritten: Int
        let bytesWritten: Int
        let seconds: Double
    }

    /// Writes the records under `none` (fast; the policy changes nothing about the frames),
    /// waiting for each frame to be written before appending the next, so frames hold exactly
    /// `replayRecordsPerFrame` records instead of whatever piled up.
    private static func write(_ options: DurabilityOptions, into directory: String) throws(BenchFailure) -> Written {
        let fatal = BenchLog.FatalError()
        let (log, _) = try BenchLog.open(directory, policy: .none, fatal: fatal)
        let start = LoadTimeline.now()
        var generator = BenchPayload(seed: 42)
        let semaphore = DispatchSemaphore(value: 0)
        var written = 0
        while written < options.replayRecords {
            let count = min(options.replayRecordsPerFrame, options.replayRecords - written)
            let frame = (0..<count).map { WALRecord(kind: BenchLog.recordKind, payload: generator.record(counter: written + $0)) }
            let lsn: LSN
            do {
                lsn = try log.append(frame)
            } catch {
                BenchLog.close(log)
                throw BenchFailure("writing the replay log failed after \(written) records: \(error)")
            }
            guard BenchLog.waitDurable(log, lsn, semaphore: semaphore) else { break }
            written += count
        }
        let stats = log.stats
        BenchLog.close(log)
        if let failure = fatal.failure { throw failure }
        return Written(
            rawBytesWritten: stats.rawBytesWritten, bytesWritten: stats.bytesWritten,
            seconds: Double(LoadTimeline.now() - start) / 1e9
        )
    }
}
