/// One valid frame found by ``SegmentScanner``.
struct ScannedFrame: Equatable, Sendable {
    var offset: Int
    var header: FrameHeader
}

/// How a segment's frames end.
enum ScanEnd: Equatable, Sendable {
    /// Zeros (preallocated space) or the end of the file after the last frame.
    case clean
    /// A valid seal frame; the next segment starts at `nextLSN`.
    case sealed(nextLSN: LSN)
    /// The first invalid frame (or an invalid segment header at offset 0).
    case bad(offset: Int, reason: String)
}

/// Everything recovery, `wal verify` and `wal repair` need to know about one segment file.
struct SegmentScan: Equatable, Sendable {
    var file: String
    /// The first LSN the file name declares (nil if the name is not a segment name).
    var nameLSN: LSN?
    var fileSize: Int
    var header: SegmentHeader?
    var headerProblem: SegmentHeader.Problem?
    var dataFrames = 0
    var records = 0
    /// The LSN after the last valid data frame (the header's first LSN if there is none).
    var nextLSN: LSN = 0
    /// The body CRC of the last valid frame (for an empty segment, the chain value it started
    /// with): what the next frame's chain field must hold.
    var chainCRC: UInt32 = 0
    /// The end of the last valid frame (4096 if there is none).
    var validEnd = WALFormat.firstFrameOffset
    var end: ScanEnd = .clean
    /// One past the last non-zero byte of the file.
    var dataEnd = 0
    /// Frames after the bad one whose header and body checksums are right (evidence of a hole
    /// rather than a torn end), and the highest LSN they hold.
    var laterValidFrames = 0
    var laterLastLSN: LSN?
    /// The bad frame's header when its own checksum was right (so the dropped LSNs are known).
    var badFrameHeader: FrameHeader?

    var isSealed: Bool {
        if case .sealed = end { return true }
        return false
    }

    var badOffset: Int? {
        if case .bad(let offset, _) = end { return offset }
        return nil
    }
}

/// Walks the frames of one segment in order, checking each (marker, header CRC, length bounds,
/// salt, LSN contiguity, chain, body CRC, bounded inflate, record parse) and handing the
/// records of every valid data frame to `visit`. Stops at the first invalid frame or the seal.
struct SegmentScanner {
    private let inflater = Inflater()

    /// - Parameters:
    ///   - previousBodyCRC: the chain value before this segment's first frame (the previous
    ///     segment's seal), or nil when the previous segment was not read.
    func scan(
        file: String,
        bytes: [UInt8],
        previousBodyCRC: UInt32?,
        visit: (ScannedFrame, [LogRecord]) throws -> Void
    ) rethrows -> SegmentScan {
        try bytes.withUnsafeBytes { raw in
            try scan(file: file, raw: raw, previousBodyCRC: previousBodyCRC, visit: visit)
        }
    }

    private func scan(
        file: String,
        raw: UnsafeRawBufferPointer,
        previousBodyCRC: UInt32?,
        visit: (ScannedFrame, [LogRecord]) throws -> Void
    ) rethrows -> SegmentScan {
        var scan = SegmentScan(file: file, nameLSN: WALFormat.firstLSN(ofSegmentName: baseName(of: file)), fileSize: raw.count)
        scan.dataEnd = Self.dataEnd(raw)
        let header: SegmentHeader
        do {
            header = try SegmentHeader.decode(raw)
        } catch {
            scan.headerProblem = error
            scan.end = .bad(offset: 0, reason: error.description)
            scan.validEnd = 0
            return scan
        }
        scan.header = header
        scan.nextLSN = header.firstLSN
        // An empty segment continues the previous one's chain.
        scan.chainCRC = previousBodyCRC ?? 0
        var chain = previousBodyCRC
        var offset = WALFormat.firstFrameOffset
        while true {
            switch check(raw, at: offset, header: header, nextLSN: scan.nextLSN, chain: chain, dataEnd: scan.dataEnd, dataFrames: scan.dataFrames) {
            case .end:
                scan.end = .clean
                return scan
            case .bad(let reason, let frameHeader):
                scan.end = .bad(offset: offset, reason: reason)
                scan.badFrameHeader = frameHeader
                findLaterFrames(raw, after: offset, header: header, into: &scan)
                return scan
            case .seal(let frameHeader):
                try visit(ScannedFrame(offset: offset, header: frameHeader), [])
                scan.chainCRC = frameHeader.bodyCRC
                scan.validEnd = offset + frameHeader.footprint
                scan.end = .sealed(nextLSN: frameHeader.firstLSN)
                return scan
            case .data(let frameHeader, let records):
                try visit(ScannedFrame(offset: offset, header: frameHeader), records)
                scan.dataFrames += 1
                scan.records += records.count
                scan.nextLSN = frameHeader.lastLSN + 1
                scan.chainCRC = frameHeader.bodyCRC
                chain = frameHeader.bodyCRC
                offset += frameHeader.footprint
                scan.validEnd = offset
            }
        }
    }

    private enum Outcome {
        case end
        case bad(String, FrameHeader?)
        case seal(FrameHeader)
        case data(FrameHeader, [LogRecord])
    }

    private func check(
        _ raw: UnsafeRawBufferPointer, at offset: Int, header: SegmentHeader,
        nextLSN: LSN, chain: UInt32?, dataEnd: Int, dataFrames: Int
    ) -> Outcome {
        if offset >= dataEnd { return .end }
        if raw.count - offset < 4 || raw.loadLE32(offset) == 0 {
            return .bad("no frame marker at a frame boundary, but non-zero bytes follow up to offset \(dataEnd)", nil)
        }
        guard raw.count - offset >= WALFormat.frameHeaderBytes else { return .bad("frame header is cut off by the end of the file", nil) }
        let frame: FrameHeader
        do {
            frame = try FrameHeader.decode(UnsafeRawBufferPointer(rebasing: raw[offset..<offset + WALFormat.frameHeaderBytes]))
        } catch {
            switch error {
            case .badMarker: return .bad("no frame marker", nil)
            case .badChecksum: return .bad("frame header checksum does not match", nil)
            case .invalidField(let field): return .bad("frame header has an invalid \(field)", nil)
            }
        }
        let bodyStart = offset + WALFormat.frameHeaderBytes
        guard Int(frame.bodyLength) <= raw.count - bodyStart else {
            return .bad("frame body of \(frame.bodyLength) bytes runs past the end of the file", frame)
        }
        guard Int(frame.rawLength) <= WALFormat.rawFrameBytesLimit else {
            return .bad("frame declares \(frame.rawLength) raw bytes, over the \(WALFormat.rawFrameBytesLimit)-byte limit", frame)
        }
        guard frame.codec == .deflate || frame.rawLength == frame.bodyLength else {
            return .bad("stored frame whose raw and stored lengths differ", frame)
        }
        guard frame.salt == header.salt else { return .bad("frame salt does not match the segment's (a stale or foreign frame)", frame) }
        switch frame.kind {
        case .data:
            guard frame.recordCount >= 1, Int(frame.rawLength) >= Int(frame.recordCount) * LogRecord.headerBytes else {
                return .bad("data frame declares \(frame.recordCount) records in \(frame.rawLength) bytes", frame)
            }
            guard frame.firstLSN == nextLSN else { return .bad("frame starts at LSN \(frame.firstLSN), expected \(nextLSN)", frame) }
        case .seal:
            guard frame.recordCount == 0, frame.codec == .stored, frame.bodyLength == UInt32(WALFormat.sealBodyBytes) else {
                return .bad("malformed seal frame", frame)
            }
            guard frame.firstLSN >= nextLSN else { return .bad("seal points back to LSN \(frame.firstLSN), expected at least \(nextLSN)", frame) }
        }
        if let chain, frame.previousBodyCRC != chain {
            return .bad("frame chain is broken (a frame before it is missing or out of place)", frame)
        }
        let body = UnsafeRawBufferPointer(rebasing: raw[bodyStart..<bodyStart + Int(frame.bodyLength)])
        guard CRC32C.checksum(body) == frame.bodyCRC else { return .bad("frame body checksum does not match", frame) }
        if frame.kind == .seal {
            guard let seal = SealBody.decode(body), seal.dataFrames == UInt32(dataFrames),
                seal.dataBytes == UInt64(offset - WALFormat.firstFrameOffset)
            else { return .bad("seal does not match the frames before it", frame) }
            return .seal(frame)
        }
        let parsed: Result<[LogRecord], FrameBodyProblem>
        if frame.codec == .deflate {
            do {
                let inflated = try inflater.decompress(body, rawLength: Int(frame.rawLength))
                parsed = inflated.withUnsafeBytes { FrameBody.records($0, count: frame.recordCount) }
            } catch {
                return .bad("frame body does not inflate: \(error)", frame)
            }
        } else {
            parsed = FrameBody.records(body, count: frame.recordCount)
        }
        switch parsed {
        case .success(let records): return .data(frame, records)
        case .failure(let problem): return .bad("frame body is malformed: \(problem)", frame)
        }
    }

    /// Looks for frames with valid header and body checksums (and this segment's salt) at every
    /// 8-byte boundary after the bad one. Diagnostics only: nothing after a bad frame is replayed.
    private func findLaterFrames(_ raw: UnsafeRawBufferPointer, after bad: Int, header: SegmentHeader, into scan: inout SegmentScan) {
        var offset = bad + WALFormat.alignment
        while offset + WALFormat.frameHeaderBytes <= scan.dataEnd {
            defer { offset += WALFormat.alignment }
            guard raw.loadLE32(offset) == WALFormat.frameMarker,
                let frame = try? FrameHeader.decode(UnsafeRawBufferPointer(rebasing: raw[offset..<offset + WALFormat.frameHeaderBytes])),
                frame.salt == header.salt,
                Int(frame.bodyLength) <= raw.count - offset - WALFormat.frameHeaderBytes
            else { continue }
            let bodyStart = offset + WALFormat.frameHeaderBytes
            guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[bodyStart..<bodyStart + Int(frame.bodyLength)])) == frame.bodyCRC else { continue }
            scan.laterValidFrames += 1
            if frame.kind == .data, frame.recordCount > 0 {
                scan.laterLastLSN = max(scan.laterLastLSN ?? 0, frame.lastLSN)
            }
        }
    }

    /// One past the last non-zero byte (0 for an all-zero file).
    static func dataEnd(_ raw: UnsafeRawBufferPointer) -> Int {
        var end = raw.count
        while end >= 8, raw.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self) == 0 { end -= 8 }
        while end > 0, raw[end - 1] == 0 { end -= 1 }
        return end
    }
}
