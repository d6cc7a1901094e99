import Dispatch
import GatehouseStorage

/// The write-ahead log alone, without the server: `threads` threads each append a record of
/// about 100 bytes and wait for its durability before appending the next (a closed loop, one
/// write in flight per thread, as a client with pipeline 1). What the server adds on top of
/// this is parsing, the project's actor, answering and the sockets.
enum LogAppendBench {
    struct Point: Sendable {
        let policy: DurabilityPolicy
        let threads: Int
        let seconds: Double
        /// Appends whose durability arrived inside the measured window.
        let records: Int
        let latencies: LatencyHistogram
        /// The log's counters over the window: syncs, frames, and LSNs assigned.
        let syncs: Int
        let frames: Int
        let logged: Int

        var recordsPerSecond: Double { seconds > 0 ? Double(records) / seconds : 0 }
    }

    /// Distinct payloads each thread cycles through (making one per append would measure the
    /// payload generator).
    private static let payloadsPerThread = 64

    static func measure(policy: DurabilityPolicy, threads: Int, options: DurabilityOptions) throws(BenchFailure) -> Point {
        let directory = try ScratchDirectory.make(in: options.parentDirectory)
        defer { ScratchDirectory.remove(directory) }
        let fatal = BenchLog.FatalError()
        let (log, _) = try BenchLog.open(directory, policy: policy, fatal: fatal)
        defer { BenchLog.close(log) }
        let timeline = LoadTimeline(warmup: options.warmup, duration: options.duration)
        // One more thread than writers: it samples the log's counters as the window opens and closes.
        let outcomes = BenchThreads.runAll(count: threads + 1) { index -> Outcome in
            index == threads ? sample(log, timeline) : append(to: log, thread: index, timeline: timeline)
        }
        if let failure = fatal.failure { throw failure }
        if let failure = outcomes.lazy.compactMap(\.failure).first { throw failure }
        guard case .counters(let opened, let closed) = outcomes[threads].kind else {
            preconditionFailure("the sampling thread reports counters")
        }
        var latencies = LatencyHistogram()
        var records = 0
        for case .writer(let histogram, let count) in outcomes.map(\.kind) {
            latencies.add(histogram)
            records += count
        }
        return Point(
            policy: policy, threads: threads, seconds: timeline.measuredSeconds, records: records, latencies: latencies,
            syncs: closed.syncs - opened.syncs, frames: closed.framesWritten - opened.framesWritten,
            logged: Int(closed.lastLSN - opened.lastLSN)
        )
    }

    private struct Outcome: Sendable {
        enum Kind: Sendable {
            case writer(LatencyHistogram, records: Int)
            case counters(opened: WALStats, closed: WALStats)
            case failed
        }

        var kind: Kind
        var failure: BenchFailure?
    }

    private static func append(to log: WriteAheadLog, thread: Int, timeline: LoadTimeline) -> Outcome {
        var generator = BenchPayload(seed: UInt64(thread) + 1)
        let records = (0..<payloadsPerThread).map { WALRecord(kind: BenchLog.recordKind, payload: generator.record(counter: $0)) }
        let semaphore = DispatchSemaphore(value: 0)
        var latencies = LatencyHistogram()
        var count = 0
        var next = 0
        while true {
            let start = LoadTimeline.now()
            guard start < timeline.endNanoseconds else { break }
            let lsn: LSN
            do {
                lsn = try log.append(records[next % payloadsPerThread])
            } catch {
                return Outcome(kind: .failed, failure: BenchFailure("append failed: \(error)"))
            }
            next += 1
            guard BenchLog.waitDurable(log, lsn, semaphore: semaphore) else {
                return Outcome(kind: .failed, failure: BenchFailure("the log failed during the run"))
            }
            let end = LoadTimeline.now()
            // Counted as the load mode counts answers: by when they arrive.
            if end >= timeline.measureFromNanoseconds, end < timeline.endNanoseconds {
                latencies.record(nanoseconds: end - start)
                count += 1
            }
        }
        return Outcome(kind: .writer(latencies, records: count))
    }

    private static func sample(_ log: WriteAheadLog, _ timeline: LoadTimeline) -> Outcome {
        LoadTimeline.sleep(until: timeline.measureFromNanoseconds)
        let opened = log.stats
        LoadTimeline.sleep(until: timeline.endNanoseconds)
        return Outcome(kind: .counters(opened: opened, closed: log.stats))
    }
}
