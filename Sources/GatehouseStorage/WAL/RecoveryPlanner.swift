/// What recovery does with the log it found (storage.md C.8; TigerBeetle's recovery case table).
enum RecoveryPlan: Equatable, Sendable {
    /// Everything checks out; writing continues after the last frame.
    case useAsIs
    /// A torn tail: keep a copy of `[offset, end of data)` aside, zero it, continue.
    case truncateTail(file: String, offset: Int)
    /// Damage that is not provably a torn write: refuse to start.
    case refuse(StorageError)
}

/// Decides, from scan results alone, whether the log can be used, cut or must be refused. Pure:
/// tested as a table of cases without files.
///
/// The rule that separates a torn tail from corruption: a crash can only tear data written
/// after the last successful sync, and only in the last segment (every earlier segment was
/// sealed and synced before the next one was created). The segment header records how much
/// that can be (`tornWindowBytes`: one frame under `always`, the unsynced bound under
/// `everysec`, the whole segment under `none`). Damage in the last segment reaching back no
/// further than that window is a torn tail; anything else is refused.
struct RecoveryPlanner: Sendable {
    /// The database the log must belong to; nil accepts the first segment's.
    var expectedDatabaseID: DatabaseID?
    var allowTornTail = true

    func plan(_ segments: [SegmentScan]) -> RecoveryPlan {
        guard let first = segments.first else { return .useAsIs }
        let databaseID = expectedDatabaseID ?? first.header?.databaseID
        var lastGood: LSN = first.header.map { $0.firstLSN - 1 } ?? 0
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            guard let header = segment.header else {
                let problem = segment.headerProblem?.description ?? "segment header is unreadable"
                if case .unsupportedVersion = segment.headerProblem {
                    return .refuse(StorageError(.unsupportedVersion, "\(segment.file): \(problem)"))
                }
                return refuse(segment.file, 0, problem, lastGood: lastGood)
            }
            if segment.nameLSN != header.firstLSN {
                return refuse(segment.file, 0, "the file name does not match the first LSN \(header.firstLSN) in its header", lastGood: lastGood)
            }
            if let databaseID, header.databaseID != databaseID {
                return refuse(segment.file, 0, "the segment belongs to database \(header.databaseID), not \(databaseID)", lastGood: lastGood)
            }
            if index > 0, case .sealed(let nextLSN) = segments[index - 1].end, nextLSN != header.firstLSN {
                return refuse(
                    segment.file, 0,
                    "the previous segment's seal says the log continues at LSN \(nextLSN), but this segment starts at \(header.firstLSN) (a segment is missing)",
                    lastGood: lastGood
                )
            }
            switch segment.end {
            case .sealed(let nextLSN):
                lastGood = nextLSN - 1
            case .clean:
                if !isLast {
                    return refuse(
                        segment.file, segment.validEnd,
                        "the segment ends without a seal, yet later segments exist (\(segments[index + 1].file))",
                        lastGood: segment.nextLSN - 1
                    )
                }
            case .bad(let offset, let reason):
                lastGood = segment.nextLSN - 1
                if !isLast {
                    return refuse(
                        segment.file, offset,
                        "\(reason), in a segment that is not the last (it was sealed and synced, so this is not a torn write)",
                        lastGood: lastGood
                    )
                }
                return planTornTail(segment, header: header, offset: offset, reason: reason, lastGood: lastGood)
            }
        }
        return .useAsIs
    }

    private func planTornTail(_ segment: SegmentScan, header: SegmentHeader, offset: Int, reason: String, lastGood: LSN) -> RecoveryPlan {
        let damaged = segment.dataEnd - offset
        if header.tornWindowBytes != 0, damaged > Int(clamping: header.tornWindowBytes) {
            return refuse(
                segment.file, offset,
                "\(reason); the damage reaches \(damaged) bytes past it, more than the \(header.tornWindowBytes) bytes a crash can tear under the `\(header.policy)` policy",
                lastGood: lastGood
            )
        }
        if header.policy == .always, segment.laterValidFrames > 0 {
            return refuse(
                segment.file, offset,
                "\(reason); \(segment.laterValidFrames) valid frame(s) follow the damage, and under `always` only the last write can be torn",
                lastGood: lastGood
            )
        }
        if !allowTornTail {
            return .refuse(
                StorageError(
                    .tornTail,
                    "\(segment.file) at offset \(offset): torn tail (\(reason)); \(damaged) bytes after the last good record (LSN \(lastGood)). Torn tails are not cut automatically in strict mode: run `gatehouse wal repair`"
                )
            )
        }
        return .truncateTail(file: segment.file, offset: offset)
    }

    private func refuse(_ file: String, _ offset: Int, _ reason: String, lastGood: LSN) -> RecoveryPlan {
        .refuse(StorageError.corruptLog(file: file, offset: offset, reason: reason, lastGoodLSN: lastGood))
    }
}

extension StorageError {
    /// The refusal message: where, what, the last good record, and what the operator can run.
    static func corruptLog(file: String, offset: Int, reason: String, lastGoodLSN: LSN) -> StorageError {
        StorageError(
            .corrupt,
            "\(file) at offset \(offset): \(reason). The last good record is LSN \(lastGoodLSN). The log is damaged before its end, "
                + "so the server will not start: run `gatehouse wal verify` to list every problem, then `gatehouse wal repair` "
                + "to cut the log at the first one (it keeps a copy of everything it changes)"
        )
    }
}
