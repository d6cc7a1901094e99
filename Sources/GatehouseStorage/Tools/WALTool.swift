import GatehouseBase

/// The operator's tools behind `gatehouse wal verify | dump | repair` (like redis-check-aof and
/// etcd-dump-logs). Pure functions over a directory; they block on the file system. Run them
/// while the server is stopped.
public enum WALTool {
    /// Reads every segment and reports every problem. Modifies nothing.
    public static func verify(directory: String, fileSystem: any FileSystem) throws -> WALVerification {
        try Inspection(directory: directory, fileSystem: fileSystem).verification()
    }

    /// One line per segment, per frame (segment, offset, LSNs, records, codec, sizes) and per
    /// record (LSN, kind, payload size), and one per problem.
    public static func dump(directory: String, fileSystem: any FileSystem, into output: (String) -> Void) throws {
        let inspection = try Inspection(directory: directory, fileSystem: fileSystem) { scan, frame, records in
            let name = baseName(of: scan.file)
            let header = frame.header
            switch header.kind {
            case .seal:
                output("seal \(name) offset=\(frame.offset) next_lsn=\(header.firstLSN) bytes=\(header.footprint)")
            case .data:
                output(
                    "frame \(name) offset=\(frame.offset) lsn=\(header.firstLSN)-\(header.lastLSN) records=\(header.recordCount) "
                        + "codec=\(header.codec == .deflate ? "deflate" : "stored") stored=\(header.bodyLength) raw=\(header.rawLength)"
                )
                for (index, record) in records.enumerated() {
                    output("record lsn=\(header.firstLSN + LSN(index)) kind=\(record.kind) bytes=\(record.payload.count)")
                }
            }
        } segmentStarted: { scan in
            output(segmentLine(scan))
        }
        let verification = inspection.verification()
        for problem in verification.problems { output("problem \(problem)") }
        output("summary segments=\(verification.segments.count) records=\(verification.records) last_good_lsn=\(verification.lastGoodLSN) problems=\(verification.problems.count)")
    }

    /// Backs up every file it will change or remove (to `<dir>/repair-<unix ms>/`), then cuts
    /// the log at the first problem: zeroes from the first bad frame to the end of its segment
    /// and removes every later segment, so the server can start. Reports what was dropped.
    public static func repair(directory: String, fileSystem: any FileSystem) throws -> WALRepairReport {
        let inspection = try Inspection(directory: directory, fileSystem: fileSystem)
        let verification = inspection.verification()
        var report = WALRepairReport(
            changed: false, backupDirectory: nil, cutFile: nil, cutOffset: nil, removedFiles: [], bytesDropped: 0,
            lastGoodLSN: verification.lastGoodLSN, lastDroppedLSN: nil, problems: verification.problems
        )
        guard let cut = inspection.firstCut() else { return report }
        let scans = inspection.scans
        let removed = scans[(cut.removeFrom)...].map(\.file)
        var toBackUp = removed
        if let zero = cut.zero { toBackUp.insert(scans[zero.index].file, at: 0) }
        let backup = joinPath(directory, "repair-\(WallTime.nowMs())")
        do throws(SystemError) {
            try fileSystem.makeDirectory(backup)
            for file in toBackUp { try fileSystem.copyFile(file, to: joinPath(backup, baseName(of: file))) }
            try fileSystem.syncDirectory(backup)
            try fileSystem.syncDirectory(directory)
            if let zero = cut.zero {
                let scan = scans[zero.index]
                let count = max(0, scan.dataEnd - zero.offset)
                if count > 0 {
                    let file = try fileSystem.open(scan.file, .readWrite)
                    defer { fileSystem.close(file) }
                    try fileSystem.writeAll(file, at: zero.offset, [UInt8](repeating: 0, count: count))
                    try fileSystem.syncData(file)
                }
                report.cutFile = scan.file
                report.cutOffset = zero.offset
                report.bytesDropped += count
            }
            for file in removed {
                report.bytesDropped += scans.first { $0.file == file }.map { max(0, $0.dataEnd - WALFormat.firstFrameOffset) } ?? 0
                try fileSystem.unlink(file)
            }
            try fileSystem.syncDirectory(directory)
        } catch {
            throw StorageError(error, "repair of \(directory) failed (the backup is in \(backup))")
        }
        report.changed = true
        report.backupDirectory = backup
        report.removedFiles = removed
        report.lastDroppedLSN = inspection.lastLSNSeen(from: cut)
        return report
    }

    private static func segmentLine(_ scan: SegmentScan) -> String {
        let name = baseName(of: scan.file)
        guard let header = scan.header else { return "segment \(name) bytes=\(scan.fileSize) header=unreadable" }
        return "segment \(name) first_lsn=\(header.firstLSN) database=\(header.databaseID) salt=\(header.salt) "
            + "policy=\(header.policy) torn_window=\(header.tornWindowBytes) created_ms=\(header.createdMs) bytes=\(scan.fileSize)"
    }
}

/// Every segment of a directory scanned, in order, for the tools.
private struct Inspection {
    let directory: String
    var scans: [SegmentScan] = []
    var temporaryFiles: [String] = []

    init(
        directory: String, fileSystem: any FileSystem,
        visit: (SegmentScan, ScannedFrame, [LogRecord]) -> Void = { _, _, _ in },
        segmentStarted: (SegmentScan) -> Void = { _ in }
    ) throws {
        self.directory = directory
        let names: [String]
        do {
            names = try fileSystem.listDirectory(directory)
        } catch {
            throw StorageError(error, "cannot list \(directory)")
        }
        temporaryFiles = names.filter { $0.hasSuffix(".tmp") }.sorted().map { joinPath(directory, $0) }
        let segments = names.compactMap { name in WALFormat.firstLSN(ofSegmentName: name).map { ($0, joinPath(directory, name)) } }
            .sorted { $0.0 < $1.0 }
        let scanner = SegmentScanner()
        var chain: UInt32?
        for (_, path) in segments {
            let bytes: [UInt8]
            do {
                bytes = try fileSystem.readFile(path)
            } catch {
                throw StorageError(error, "cannot read \(path)")
            }
            // The segment line comes before its frames: announce it from the header alone.
            var preview = SegmentScan(file: path, nameLSN: WALFormat.firstLSN(ofSegmentName: baseName(of: path)), fileSize: bytes.count)
            preview.header = try? SegmentHeader.decode(bytes)
            segmentStarted(preview)
            let scan = scanner.scan(file: path, bytes: bytes, previousBodyCRC: chain) { frame, records in
                visit(preview, frame, records)
            }
            chain = scan.isSealed ? scan.chainCRC : nil
            scans.append(scan)
        }
    }

    /// Where repair cuts: zero `[offset, end)` of segment `zero.index` and remove segments from
    /// `removeFrom` on.
    struct Cut {
        var zero: (index: Int, offset: Int)?
        var removeFrom: Int
    }

    func firstCut() -> Cut? {
        let databaseID = scans.first?.header?.databaseID
        for (index, scan) in scans.enumerated() {
            guard let header = scan.header, scan.nameLSN == header.firstLSN, header.databaseID == databaseID else {
                return Cut(zero: nil, removeFrom: index)
            }
            if index > 0, case .sealed(let next) = scans[index - 1].end, next != header.firstLSN {
                return Cut(zero: nil, removeFrom: index)
            }
            switch scan.end {
            case .sealed: continue
            case .clean:
                if index < scans.count - 1 { return Cut(zero: (index, scan.validEnd), removeFrom: index + 1) }
            case .bad(let offset, _):
                return Cut(zero: (index, offset), removeFrom: index + 1)
            }
        }
        return nil
    }

    func lastLSNSeen(from cut: Cut) -> LSN? {
        var last: LSN?
        if let zero = cut.zero {
            let scan = scans[zero.index]
            last = scan.laterLastLSN
            if let bad = scan.badFrameHeader, bad.kind == .data, bad.recordCount > 0 { last = max(last ?? 0, bad.lastLSN) }
        }
        for scan in scans[cut.removeFrom...] where scan.header != nil {
            if scan.dataFrames > 0 { last = max(last ?? 0, scan.nextLSN - 1) }
            if let later = scan.laterLastLSN { last = max(last ?? 0, later) }
        }
        return last
    }

    func verification() -> WALVerification {
        let plan = RecoveryPlanner(expectedDatabaseID: nil, allowTornTail: true).plan(scans)
        var problems: [WALProblem] = []
        var records = 0
        var lastGood: LSN = 0
        var healthy = true
        for index in scans.indices {
            let scan = scans[index]
            let found = self.problems(at: index, plan: plan)
            if healthy {
                records += scan.records
                if scan.dataFrames > 0 { lastGood = scan.nextLSN - 1 }
                if case .sealed(let next) = scan.end { lastGood = max(lastGood, next - 1) }
            }
            if !found.isEmpty || !(scan.isSealed || index == scans.count - 1) { healthy = false }
            problems += found
        }
        let startup: WALVerification.Startup
        switch plan {
        case .useAsIs: startup = .starts
        case .truncateTail(let file, let offset): startup = .cutsTornTail(file: file, offset: offset, bytes: (scans.last?.dataEnd ?? offset) - offset)
        case .refuse(let error): startup = .refuses(error.message)
        }
        return WALVerification(
            segments: scans.map(summary), problems: problems, records: records,
            firstLSN: scans.first?.header?.firstLSN ?? 0, lastGoodLSN: lastGood, startup: startup, temporaryFiles: temporaryFiles
        )
    }

    private func summary(_ scan: SegmentScan) -> WALSegmentSummary {
        WALSegmentSummary(
            file: scan.file, firstLSN: scan.header?.firstLSN ?? scan.nameLSN ?? 0,
            lastLSN: scan.dataFrames > 0 ? scan.nextLSN - 1 : nil, frames: scan.dataFrames, records: scan.records,
            fileBytes: scan.fileSize, validBytes: scan.validEnd, sealed: scan.isSealed,
            policy: scan.header?.policy, databaseID: scan.header?.databaseID
        )
    }

    /// Everything wrong with segment `index`, on its own and against the one before it.
    private func problems(at index: Int, plan: RecoveryPlan) -> [WALProblem] {
        let scan = scans[index]
        var found: [WALProblem] = []
        func corrupt(_ file: String, _ offset: Int, _ message: String) {
            found.append(WALProblem(kind: .corrupt, file: file, offset: offset, message: message))
        }
        if let header = scan.header {
            if scan.nameLSN != header.firstLSN { corrupt(scan.file, 0, "the file name does not match the first LSN \(header.firstLSN) in its header") }
            if let databaseID = scans.first?.header?.databaseID, header.databaseID != databaseID {
                corrupt(scan.file, 0, "belongs to database \(header.databaseID), not \(databaseID)")
            }
            if index > 0 {
                let previous = scans[index - 1]
                if case .sealed(let next) = previous.end, next != header.firstLSN {
                    corrupt(scan.file, 0, "the previous segment's seal says the log continues at LSN \(next), this segment starts at \(header.firstLSN) (a segment is missing)")
                }
                if previous.header != nil, previous.end == .clean {
                    corrupt(previous.file, previous.validEnd, "the segment ends without a seal, yet later segments exist")
                }
            }
        }
        if case .bad(let offset, let reason) = scan.end {
            var message = reason
            if scan.laterValidFrames > 0 {
                message += "; \(scan.laterValidFrames) valid frame(s) follow" + (scan.laterLastLSN.map { " (up to LSN \($0))" } ?? "")
            }
            let torn = plan == .truncateTail(file: scan.file, offset: offset) && index == scans.count - 1
            found.append(WALProblem(kind: torn ? .tornTail : .corrupt, file: scan.file, offset: offset, message: message))
        }
        return found
    }
}
