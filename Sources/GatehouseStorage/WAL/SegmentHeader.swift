/// The first 64 bytes of a segment (docs/data-format.md, "Segment header").
struct SegmentHeader: Equatable, Sendable {
    var databaseID: DatabaseID
    /// Random per segment and repeated in every frame, so a frame from another segment is refused.
    var salt: UInt32
    var firstLSN: LSN
    var createdMs: Int64
    /// The policy the segment was written under; with `tornWindowBytes` it tells recovery how
    /// much unsynced data a crash may have torn.
    var policy: DurabilityPolicy
    /// Bytes at the end of the segment's data that may be torn by a crash; 0 means the whole segment.
    var tornWindowBytes: UInt64

    enum Problem: Error, Equatable, CustomStringConvertible {
        case truncated
        case badMagic
        case unsupportedVersion(UInt16)
        case badChecksum
        case invalidField(String)

        var description: String {
            switch self {
            case .truncated: "segment header is truncated"
            case .badMagic: "segment header has the wrong magic (not a Gatehouse log segment)"
            case .unsupportedVersion(let version): "segment format version \(version) is not supported (this build reads version \(WALFormat.version))"
            case .badChecksum: "segment header checksum does not match"
            case .invalidField(let field): "segment header has an invalid \(field)"
            }
        }
    }

    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(WALFormat.segmentHeaderBytes)
        bytes.append(contentsOf: WALFormat.segmentMagic)
        bytes.appendLE16(WALFormat.version)
        bytes.append(WALFormat.checksumCRC32C)
        bytes.append(WALFormat.policyCode(policy))
        bytes.appendLE32(salt)
        bytes.append(contentsOf: databaseID.bytes)
        bytes.appendLE64(firstLSN)
        bytes.appendLE64(UInt64(bitPattern: createdMs))
        bytes.appendLE64(tornWindowBytes)
        bytes.appendLE32(0)
        bytes.appendLE32(CRC32C.checksum(bytes))
        assert(bytes.count == WALFormat.segmentHeaderBytes)
        return bytes
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws(Problem) -> SegmentHeader {
        guard bytes.count >= WALFormat.segmentHeaderBytes else { throw .truncated }
        guard Array(bytes[0..<8]) == WALFormat.segmentMagic else { throw .badMagic }
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<60]))
        guard crc == bytes.loadLE32(60) else { throw .badChecksum }
        let version = bytes.loadLE16(8)
        guard version == WALFormat.version else { throw .unsupportedVersion(version) }
        guard bytes[10] == WALFormat.checksumCRC32C else { throw .invalidField("checksum algorithm \(bytes[10])") }
        guard let policy = WALFormat.policy(code: bytes[11]) else { throw .invalidField("policy \(bytes[11])") }
        guard bytes.loadLE32(56) == 0 else { throw .invalidField("reserved field") }
        let firstLSN = bytes.loadLE64(32)
        guard firstLSN >= 1 else { throw .invalidField("first LSN 0") }
        return SegmentHeader(
            databaseID: DatabaseID(unchecked: Array(bytes[16..<32])),
            salt: bytes.loadLE32(12),
            firstLSN: firstLSN,
            createdMs: Int64(bitPattern: bytes.loadLE64(40)),
            policy: policy,
            tornWindowBytes: bytes.loadLE64(48)
        )
    }

    static func decode(_ bytes: [UInt8]) throws(Problem) -> SegmentHeader {
        try withRawBytes(bytes) { (raw) throws(Problem) in try decode(raw) }
    }
}
