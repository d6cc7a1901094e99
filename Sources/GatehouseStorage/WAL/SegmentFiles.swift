import GatehouseBase

/// The segment a writer appends to.
struct OpenSegment {
    var file: OpenFile
    var path: String
    var header: SegmentHeader
    /// Where the next frame goes.
    var offset: Int
    /// The body CRC of the last frame written (the next frame's chain value).
    var chainCRC: UInt32
    var dataFrames: Int
    /// The first LSN of the next data frame.
    var nextLSN: LSN
    var fileSize: Int

    /// Whether a frame of `footprint` bytes still leaves room for the seal.
    func fits(_ footprint: Int) -> Bool {
        offset + footprint + WALFormat.sealFrameBytes <= fileSize
    }
}

/// A segment file in the log directory.
struct SegmentEntry: Sendable, Equatable {
    var firstLSN: LSN
    var path: String
    var bytes: Int
}

/// Creating, installing and sealing segment files; used by `open` and by the flusher.
struct SegmentFiles: Sendable {
    let directory: String
    let fileSystem: any FileSystem
    let options: WALOptions
    let limits: WALLimits

    var preparedPath: String { joinPath(directory, WALFormat.preparedSegmentName) }

    /// `next.tmp`, allocated (and zero-filled) to the full segment size and synced, so writes
    /// into it cannot hit ENOSPC and disk-full shows up here, before anything is queued for it.
    func prepare() throws(SystemError) -> OpenFile {
        try? fileSystem.unlink(preparedPath)
        let file = try fileSystem.open(preparedPath, .createNew)
        do throws(SystemError) {
            try fileSystem.allocate(file, offset: 0, length: limits.segmentBytes)
            if options.zeroFillSegments {
                let zeros = [UInt8](repeating: 0, count: min(1 << 20, limits.segmentBytes))
                var offset = 0
                while offset < limits.segmentBytes {
                    let count = min(zeros.count, limits.segmentBytes - offset)
                    try withRawBytes(zeros) { (raw) throws(SystemError) in
                        try fileSystem.writeAll(file, at: offset, UnsafeRawBufferPointer(rebasing: raw[0..<count]))
                    }
                    offset += count
                }
            }
            try fileSystem.sync(file)
        } catch {
            fileSystem.close(file)
            try? fileSystem.unlink(preparedPath)
            throw error
        }
        return file
    }

    func newHeader(firstLSN: LSN, databaseID: DatabaseID) -> SegmentHeader {
        SegmentHeader(
            databaseID: databaseID,
            salt: UInt32(truncatingIfNeeded: options.random.randomUInt64()),
            firstLSN: firstLSN,
            createdMs: WallTime.nowMs(),
            policy: options.policy,
            tornWindowBytes: limits.tornWindowBytes
        )
    }

    /// Writes the header into a prepared file, syncs it, renames it to `<firstLSN>.wal` and
    /// fsyncs the directory, so a visible segment always has a durable header and nothing in
    /// it is acknowledged before its name is durable.
    func install(_ prepared: OpenFile, header: SegmentHeader, previousChainCRC: UInt32) throws(SystemError) -> OpenSegment {
        try fileSystem.writeAll(prepared, at: 0, header.encoded())
        try fileSystem.syncData(prepared)
        let path = joinPath(directory, WALFormat.segmentName(firstLSN: header.firstLSN))
        try fileSystem.rename(preparedPath, to: path)
        try fileSystem.syncDirectory(directory)
        return OpenSegment(
            file: OpenFile(rawValue: prepared.rawValue, path: path), path: path, header: header,
            offset: WALFormat.firstFrameOffset, chainCRC: previousChainCRC, dataFrames: 0,
            nextLSN: header.firstLSN, fileSize: limits.segmentBytes
        )
    }

    /// Writes the seal frame (the next segment starts at `nextLSN`). The caller syncs the
    /// segment next, whatever the policy: a sealed segment is complete on disk.
    func writeSeal(_ segment: inout OpenSegment, nextLSN: LSN) throws(SystemError) {
        let seal = FrameEncoder.encodeSeal(
            nextLSN: nextLSN, salt: segment.header.salt, previousBodyCRC: segment.chainCRC,
            seal: SealBody(dataFrames: UInt32(segment.dataFrames), dataBytes: UInt64(segment.offset - WALFormat.firstFrameOffset))
        )
        try fileSystem.writeAll(segment.file, at: segment.offset, seal.bytes)
        segment.offset += seal.header.footprint
        segment.chainCRC = seal.header.bodyCRC
    }

    /// Gives back the preallocated space after a seal that came early (at startup).
    func trimSealed(_ segment: inout OpenSegment) throws(SystemError) {
        try fileSystem.truncate(segment.file, to: segment.offset)
        try fileSystem.sync(segment.file)
        segment.fileSize = segment.offset
    }
}
