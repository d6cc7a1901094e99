import GatehouseBase

/// Recovery at `open` (storage.md C.8): list the segments, scan and replay them, let the
/// ``RecoveryPlanner`` decide, cut a torn tail, and hand the writer where to continue.
struct WALRecovery {
    let files: SegmentFiles
    let logger: Logger

    var directory: String { files.directory }
    var fileSystem: any FileSystem { files.fileSystem }

    struct Outcome {
        var report: RecoveryReport
        var segments: [SegmentEntry]
        /// The last segment's scan, after any torn tail was cut (its end is then `.clean`).
        var last: SegmentScan?
        var databaseID: DatabaseID?
        /// The LSN after the last record (or the last seal's next LSN); `replayFrom` for an empty log.
        var nextLSN: LSN
    }

    /// Replays every record at or after `replayFrom` in two stages on two cores (``Pipeline``):
    /// a thread of its own reads, checks and inflates the segments and calls `prepare` on each
    /// record (decoding, which needs nothing applied before it), while the caller's thread calls
    /// `apply` on the prepared records in log order, a batch at a time. An error of either
    /// stage ends the replay as if it had run on one thread: what came before it was applied,
    /// nothing after it.
    func run<Prepared>(
        replayFrom: LSN, prepare: (LSN, LogRecord) throws -> Prepared, apply: ([(lsn: LSN, record: Prepared)]) throws -> Void
    ) throws -> Outcome {
        let created = try prepareDirectory()
        let listing = try listSegments()
        if listing.isEmpty, !created {
            // A new log in a directory someone else created: make sure its entry is durable
            // before the first segment goes in (a no-op when it already was).
            do {
                try fileSystem.syncDirectory(directoryName(of: directory))
            } catch {
                throw StorageError(error, "cannot sync the parent of \(directory)")
            }
        }
        let scanned = try Pipeline.run(
            produce: { emit in
                try scan(listing, replayFrom: replayFrom) { lsn, record in try emit((lsn, try prepare(lsn, record))) }
            },
            consume: apply
        )
        var scans = scanned.scans
        let replayed = scanned.visited
        if let first = scans.first?.header, first.firstLSN > replayFrom {
            throw StorageError.corruptLog(
                file: scans[0].file, offset: 0,
                reason: "the log starts at LSN \(first.firstLSN), but replay must start at LSN \(replayFrom) (older segments are missing)",
                lastGoodLSN: replayFrom - 1
            )
        }
        let planner = RecoveryPlanner(expectedDatabaseID: files.options.databaseID, allowTornTail: files.options.allowTornTail)
        var tornTail: RecoveryReport.TornTail?
        switch planner.plan(scans) {
        case .refuse(let error):
            logger.error("wal.recovery.refused", metadata: ["error": "\(error)"])
            throw error
        case .useAsIs:
            break
        case .truncateTail(let file, let offset):
            tornTail = try cutTornTail(&scans[scans.count - 1], file: file, offset: offset)
        }
        return outcome(listing: listing, scans: scans, replayed: replayed, tornTail: tornTail, created: created, replayFrom: replayFrom)
    }

    /// Scans the segments from the one holding `replayFrom` (and the one before it) and hands
    /// `visit` every record from `replayFrom` on, in order, until a segment does not follow on
    /// from the one before. Answers every segment's scan and how many records were visited.
    private func scan(_ listing: [SegmentEntry], replayFrom: LSN, visit: (LSN, LogRecord) throws -> Void) throws
        -> (scans: [SegmentScan], visited: Int)
    {
        // Scan from the segment holding `replayFrom`, and the one before it: its seal gives the
        // chain value an empty last segment continues (and checks the seal itself).
        let start = max(0, (listing.lastIndex { $0.firstLSN <= replayFrom } ?? 0) - 1)
        var scans: [SegmentScan] = []
        var replaying = true
        var visited = 0
        var previousChain: UInt32?
        var expectedFirst: LSN?
        let scanner = SegmentScanner()
        for entry in listing[start...] {
            let bytes: [UInt8]
            do {
                bytes = try fileSystem.readFile(entry.path)
            } catch {
                throw StorageError(error, "cannot read \(entry.path)")
            }
            if replaying {
                replaying = segmentIsConsistent(bytes, entry: entry, expectedFirst: expectedFirst)
            }
            let scan = try scanner.scan(file: entry.path, bytes: bytes, previousBodyCRC: previousChain) { frame, records in
                guard replaying else { return }
                for (index, record) in records.enumerated() {
                    let lsn = frame.header.firstLSN + LSN(index)
                    if lsn >= replayFrom {
                        try visit(lsn, record)
                        visited += 1
                    }
                }
            }
            scans.append(scan)
            if case .sealed(let nextLSN) = scan.end {
                previousChain = scan.chainCRC
                expectedFirst = nextLSN
            } else {
                replaying = false
                previousChain = nil
                expectedFirst = nil
            }
        }
        return (scans, visited)
    }

    /// Replay stops before a segment that does not follow on from the one before (its header,
    /// name, database or first LSN is off), so the callback never sees a gap; the planner then
    /// refuses the log.
    private func segmentIsConsistent(_ bytes: [UInt8], entry: SegmentEntry, expectedFirst: LSN?) -> Bool {
        guard let header = try? SegmentHeader.decode(bytes), header.firstLSN == entry.firstLSN else { return false }
        if let expectedFirst, header.firstLSN != expectedFirst { return false }
        if let expected = files.options.databaseID, header.databaseID != expected { return false }
        return true
    }

    /// Creates the directory when missing (and makes its entry durable); removes leftover temp files.
    private func prepareDirectory() throws(StorageError) -> Bool {
        var created = false
        do {
            _ = try fileSystem.listDirectory(directory)
        } catch {
            guard StorageError(error, "").code == .notFound else { throw StorageError(error, "cannot list \(directory)") }
            do {
                try fileSystem.makeDirectoriesDurably(directory)
            } catch {
                throw StorageError(error, "cannot create \(directory)")
            }
            created = true
        }
        return created
    }

    private func listSegments() throws(StorageError) -> [SegmentEntry] {
        let names: [String]
        do {
            names = try fileSystem.listDirectory(directory)
        } catch {
            throw StorageError(error, "cannot list \(directory)")
        }
        var entries: [SegmentEntry] = []
        var removedTemporary = false
        for name in names {
            let path = joinPath(directory, name)
            if name.hasSuffix(".tmp") {
                logger.info("wal.recovery.temporary_removed", metadata: ["file": "\(path)"])
                do { try fileSystem.unlink(path) } catch { throw StorageError(error, "cannot remove \(path)") }
                removedTemporary = true
            } else if let firstLSN = WALFormat.firstLSN(ofSegmentName: name) {
                let size = (try? fileSystem.fileSize(atPath: path)) ?? 0
                entries.append(SegmentEntry(firstLSN: firstLSN, path: path, bytes: size))
            }
        }
        if removedTemporary {
            do { try fileSystem.syncDirectory(directory) } catch { throw StorageError(error, "cannot sync \(directory)") }
        }
        return entries.sorted { $0.firstLSN < $1.firstLSN }
    }

    /// Keeps `[offset, end of data)` aside in `<segment>.broken-<unix ms>`, zeroes it and syncs.
    /// Idempotent: a crash at any point leaves a tail the next run cuts the same way.
    private func cutTornTail(_ scan: inout SegmentScan, file: String, offset: Int) throws(StorageError) -> RecoveryReport.TornTail {
        let count = scan.dataEnd - offset
        let keptAside = "\(file).broken-\(WallTime.nowMs())"
        do throws(SystemError) {
            let segment = try fileSystem.open(file, .readWrite)
            defer { fileSystem.close(segment) }
            let damaged = try fileSystem.read(segment, at: offset, count: count)
            let copy = try fileSystem.open(keptAside, .createOrTruncate)
            do throws(SystemError) {
                try fileSystem.writeAll(copy, at: 0, damaged)
                try fileSystem.sync(copy)
            } catch {
                fileSystem.close(copy)
                throw error
            }
            fileSystem.close(copy)
            try fileSystem.syncDirectory(directory)
            let zeros = [UInt8](repeating: 0, count: min(count, 1 << 20))
            var done = 0
            while done < count {
                let chunk = min(zeros.count, count - done)
                try withRawBytes(zeros) { (raw) throws(SystemError) in
                    try fileSystem.writeAll(segment, at: offset + done, UnsafeRawBufferPointer(rebasing: raw[0..<chunk]))
                }
                done += chunk
            }
            try fileSystem.syncData(segment)
        } catch {
            throw StorageError(error, "cannot cut the torn tail of \(file)")
        }
        var reason = ""
        if case .bad(_, let why) = scan.end { reason = why }
        var lastDropped = scan.laterLastLSN
        if let bad = scan.badFrameHeader, bad.kind == .data, bad.firstLSN == scan.nextLSN, bad.recordCount > 0 {
            lastDropped = max(lastDropped ?? 0, bad.lastLSN)
        }
        let tornTail = RecoveryReport.TornTail(
            file: file, offset: offset, bytes: count, keptAside: keptAside,
            firstDroppedLSN: scan.nextLSN, lastDroppedLSN: lastDropped.flatMap { $0 >= scan.nextLSN ? $0 : nil }, reason: reason
        )
        logger.warning(
            "wal.recovery.torn_tail_cut",
            metadata: [
                "file": "\(file)", "offset": .init(offset), "bytes": .init(count), "kept_aside": "\(keptAside)",
                "first_dropped_lsn": .init(scan.nextLSN), "reason": "\(reason)",
            ]
        )
        scan.end = .clean
        scan.dataEnd = offset
        scan.laterValidFrames = 0
        scan.laterLastLSN = nil
        scan.badFrameHeader = nil
        return tornTail
    }

    private func outcome(
        listing: [SegmentEntry], scans: [SegmentScan], replayed: Int,
        tornTail: RecoveryReport.TornTail?, created: Bool, replayFrom: LSN
    ) -> Outcome {
        let last = scans.last
        var nextLSN = replayFrom
        if let last {
            if case .sealed(let sealedNext) = last.end { nextLSN = sealedNext } else { nextLSN = last.nextLSN }
        }
        let databaseID = scans.first?.header?.databaseID
        let report = RecoveryReport(
            segments: listing.count,
            segmentsScanned: scans.count,
            recordsReplayed: replayed,
            firstLSN: listing.isEmpty || nextLSN <= listing[0].firstLSN ? 0 : listing[0].firstLSN,
            lastLSN: listing.isEmpty ? 0 : nextLSN - 1,
            tornTail: tornTail,
            skippedLSNs: nil,
            databaseID: databaseID ?? DatabaseID(unchecked: [UInt8](repeating: 0, count: DatabaseID.byteCount)),
            created: created || listing.isEmpty
        )
        return Outcome(report: report, segments: listing, last: last, databaseID: databaseID, nextLSN: nextLSN)
    }
}
