/// The 48-byte header in front of every frame (docs/data-format.md, "Frame").
struct FrameHeader: Equatable, Sendable {
    enum Kind: UInt8, Sendable {
        case data = 0
        /// The last frame of a segment; `firstLSN` is the first LSN of the next segment.
        case seal = 1
    }

    enum Codec: UInt8, Sendable {
        case stored = 0
        case deflate = 1
    }

    var bodyLength: UInt32
    var rawLength: UInt32
    var firstLSN: LSN
    var recordCount: UInt32
    var codec: Codec
    var kind: Kind
    var salt: UInt32
    /// The body CRC of the frame before this one (in this or the previous segment): a chain
    /// that catches dropped, duplicated and reordered frames.
    var previousBodyCRC: UInt32
    var bodyCRC: UInt32

    /// Header plus body plus padding to the next 8-byte boundary.
    var footprint: Int { WALFormat.frameHeaderBytes + WALFormat.aligned(Int(bodyLength)) }

    /// The last LSN of a data frame.
    var lastLSN: LSN { firstLSN + LSN(recordCount) - 1 }

    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(WALFormat.frameHeaderBytes)
        bytes.appendLE32(WALFormat.frameMarker)
        bytes.appendLE32(0)  // header CRC, filled in below
        bytes.appendLE32(bodyLength)
        bytes.appendLE32(rawLength)
        bytes.appendLE64(firstLSN)
        bytes.appendLE32(recordCount)
        bytes.append(codec.rawValue)
        bytes.append(kind.rawValue)
        bytes.appendLE16(0)
        bytes.appendLE32(salt)
        bytes.appendLE32(previousBodyCRC)
        bytes.appendLE32(bodyCRC)
        bytes.appendLE32(0)
        bytes.storeLE32(CRC32C.checksum(bytes[8...]), at: 4)
        return bytes
    }

    enum Problem: Error, Equatable {
        case badMarker
        case badChecksum
        case invalidField(String)
    }

    /// Decodes the 48 bytes at the start of `bytes` (the caller checked they are there). Only the
    /// header's own consistency is checked here; lengths against the file are the scanner's job.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(Problem) -> FrameHeader {
        precondition(bytes.count >= WALFormat.frameHeaderBytes, "decode needs a whole frame header")
        guard bytes.loadLE32(0) == WALFormat.frameMarker else { throw .badMarker }
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[8..<WALFormat.frameHeaderBytes]))
        guard crc == bytes.loadLE32(4) else { throw .badChecksum }
        guard let codec = Codec(rawValue: bytes[28]) else { throw .invalidField("codec \(bytes[28])") }
        guard let kind = Kind(rawValue: bytes[29]) else { throw .invalidField("kind \(bytes[29])") }
        guard bytes.loadLE16(30) == 0, bytes.loadLE32(44) == 0 else { throw .invalidField("reserved field") }
        return FrameHeader(
            bodyLength: bytes.loadLE32(8),
            rawLength: bytes.loadLE32(12),
            firstLSN: bytes.loadLE64(16),
            recordCount: bytes.loadLE32(24),
            codec: codec,
            kind: kind,
            salt: bytes.loadLE32(32),
            previousBodyCRC: bytes.loadLE32(36),
            bodyCRC: bytes.loadLE32(40)
        )
    }
}

/// What a seal frame's 16-byte body says about its segment.
struct SealBody: Equatable {
    var dataFrames: UInt32
    /// Bytes from the first frame to the seal (the seal's offset minus 4096).
    var dataBytes: UInt64

    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLE32(dataFrames)
        bytes.appendLE32(0)
        bytes.appendLE64(dataBytes)
        return bytes
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) -> SealBody? {
        guard bytes.count == WALFormat.sealBodyBytes, bytes.loadLE32(4) == 0 else { return nil }
        return SealBody(dataFrames: bytes.loadLE32(0), dataBytes: bytes.loadLE64(8))
    }
}
