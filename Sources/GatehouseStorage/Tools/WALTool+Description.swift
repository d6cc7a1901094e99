extension WALVerification: CustomStringConvertible {
    /// The report `gatehouse wal verify` prints.
    public var description: String {
        var lines: [String] = []
        for segment in segments {
            let lsns = segment.lastLSN.map { "\(segment.firstLSN)-\($0)" } ?? "\(segment.firstLSN) (empty)"
            lines.append(
                "segment \(baseName(of: segment.file)) lsn=\(lsns) frames=\(segment.frames) records=\(segment.records) "
                    + "bytes=\(segment.fileBytes) sealed=\(segment.sealed)" + (segment.policy.map { " policy=\($0)" } ?? "")
            )
        }
        for file in temporaryFiles { lines.append("temporary \(file) (removed at the next start)") }
        for problem in problems { lines.append("problem \(problem)") }
        switch startup {
        case .starts: lines.append("startup: the server starts with this log")
        case .cutsTornTail(let file, let offset, let bytes):
            lines.append("startup: the server cuts a torn tail of \(bytes) bytes from \(file) at offset \(offset) (keeping a .broken copy) and starts")
        case .refuses(let reason): lines.append("startup: the server refuses to start: \(reason)")
        }
        lines.append("\(isHealthy ? "ok" : "damaged"): \(segments.count) segments, \(records) records, last good LSN \(lastGoodLSN), \(problems.count) problems")
        return lines.joined(separator: "\n")
    }
}

extension WALRepairReport: CustomStringConvertible {
    /// The report `gatehouse wal repair` prints.
    public var description: String {
        guard changed else { return "nothing to repair: the log has no damage (last LSN \(lastGoodLSN))" }
        var lines: [String] = []
        for problem in problems { lines.append("problem \(problem)") }
        if let backupDirectory { lines.append("backup: every changed or removed file was copied to \(backupDirectory)") }
        if let cutFile, let cutOffset { lines.append("cut: \(cutFile) zeroed from offset \(cutOffset)") }
        for file in removedFiles { lines.append("removed: \(file)") }
        let dropped = lastDroppedLSN.map { "LSNs \(lastGoodLSN + 1)-\($0)" } ?? "records after LSN \(lastGoodLSN)"
        lines.append("repaired: \(bytesDropped) bytes dropped (\(dropped)); the log now ends at LSN \(lastGoodLSN)")
        return lines.joined(separator: "\n")
    }
}
