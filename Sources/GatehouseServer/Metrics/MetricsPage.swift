import GatehouseBase
import GatehouseRuntime
import GatehouseStorage

/// `GET /metrics` (HTTP.md, "Metrics"): counters the loops and the log keep, and state the
/// projects publish, read without entering an actor or waiting for a write. No label carries a
/// value a client chose.
extension ServerCore {
    func metricsText() -> [UInt8] {
        var text = PrometheusText()
        text.gauge("gatehouse_build_info", help: "The running build; the value is always 1.", [([("version", GatehouseVersion.current)], 1)])
        meter.write(into: &text)
        let http = stats.openHTTPConnections
        text.gauge("gatehouse_connections", help: "Open connections by listener.", [
            ([("transport", "line")], Double(max(0, stats.openConnections - http))), ([("transport", "http")], Double(http)),
        ])
        text.gauge("gatehouse_watches", help: "Profiles watched over every connection.", [([], Double(stats.watches))])
        writeStorage(into: &text)
        text.gauge("gatehouse_projects", help: "Projects on this server.", [([], Double(registry.projectCount))])
        text.gauge("gatehouse_profiles", help: "Profiles in every project.", [([], Double(registry.profileCount))])
        deliverer.meter.write(into: &text, figures: registry.allProjects().map(\.published.outboxFigures))
        text.gauge("gatehouse_read_only", help: "1 while the server refuses writes (the disk is full or the log failed).", [
            ([], engine.log.isReadOnly ? 1 : 0),
        ])
        writeProcess(into: &text)
        return text.bytes
    }

    private func writeStorage(into text: inout PrometheusText) {
        let wal = engine.log.stats
        text.counter("gatehouse_wal_appends_total", help: "Records appended to the write-ahead log.", [([], Double(wal.recordsWritten))])
        text.counter("gatehouse_wal_syncs_total", help: "fsyncs of the write-ahead log.", [([], Double(wal.syncs))])
        text.counter("gatehouse_wal_bytes_total", help: "Bytes written to the write-ahead log (compressed frames).", [
            ([], Double(wal.bytesWritten)),
        ])
        text.histogram("gatehouse_wal_sync_duration_seconds", help: "How long each fsync of the log took.", [
            ([], engine.log.syncDurations.snapshot()),
        ])
        let checkpointer = engine.checkpointer
        text.counter("gatehouse_snapshots_total", help: "Project snapshots written.", [([], Double(checkpointer.snapshotsTaken))])
        text.histogram("gatehouse_snapshot_duration_seconds", help: "How long each project snapshot took, capture to manifest.", [
            ([], checkpointer.snapshotDurations.snapshot()),
        ])
    }

    private func writeProcess(into text: inout PrometheusText) {
        let process = ProcessMetrics.read()
        text.gauge("process_resident_memory_bytes", help: "Resident memory size in bytes.", [([], process.residentMemoryBytes)])
        text.gauge("process_virtual_memory_bytes", help: "Virtual memory size in bytes.", [([], process.virtualMemoryBytes)])
        text.counter("process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.", [([], process.cpuSeconds)])
        text.gauge("process_open_fds", help: "Number of open file descriptors.", [([], process.openFileDescriptors)])
        text.gauge("process_max_fds", help: "Maximum number of open file descriptors.", [([], process.maxFileDescriptors)])
        text.gauge("process_start_time_seconds", help: "Start time of the process since unix epoch in seconds.", [
            ([], process.startTimeSeconds),
        ])
    }
}
