import GatehouseStorage

/// The measurements `gatehouse-bench durability` can make (`--parts`).
enum DurabilityPart: String, CaseIterable, Sendable {
    /// Durable writes (`config.put`) through an in-process server: writes/s, latency, fsyncs.
    case server
    /// The write-ahead log alone: closed-loop appends, each waiting for its durability.
    case log
    /// Opening a log of N records: recovery and replay speed.
    case replay
    /// Writing and reading back a snapshot of M MiB.
    case snapshot
}

/// What `durability` measures and for how long. The defaults are the full run; ``smoke`` is
/// the short pass `--smoke` makes so CI exercises every part.
struct DurabilityOptions: Sendable {
    var parts = DurabilityPart.allCases
    var policies: [DurabilityPolicy] = [.always, .everysec]
    /// Concurrent clients (server) and appending threads (log), each with one write in flight.
    var clients = [1, 10, 50]
    var warmup: Duration = .seconds(1)
    /// Measured time of each point (a policy and a client count).
    var duration: Duration = .seconds(5)
    /// Records written and then replayed (`--records`).
    var replayRecords = 1_000_000
    /// Records per append when writing the replay log: one frame each, as a group commit of
    /// this many concurrent writers would make.
    var replayRecordsPerFrame = 50
    /// Size of the snapshot body (`--snapshot-mib`).
    var snapshotMiB = 256
    /// Where the temporary directories go (`--data-dir`); nil: `$TMPDIR`, else `/tmp`.
    var parentDirectory: String?
    var ioThreads: Int?

    /// A fraction of a second per point, tiny sizes: checks that every part works, measures nothing.
    static var smoke: DurabilityOptions {
        var options = DurabilityOptions()
        options.clients = [1, 4]
        options.warmup = .milliseconds(100)
        options.duration = .milliseconds(300)
        options.replayRecords = 20_000
        options.snapshotMiB = 4
        return options
    }
}
