import GatehouseBase
@testable import GatehouseStorage

/// Builds segment files in memory, frame by frame, for format, scanner and recovery tests.
struct SegmentBuilder {
    var header: SegmentHeader
    var bytes: [UInt8]
    var chain: UInt32
    var nextLSN: LSN
    var dataFrames = 0
    /// Offsets of the frames written so far.
    var frameOffsets: [Int] = []
    private let encoder = FrameEncoder()

    init(
        firstLSN: LSN = 1,
        databaseID: DatabaseID = DatabaseID(bytes: Array(1...16))!,
        salt: UInt32 = 0xA1B2_C3D4,
        policy: DurabilityPolicy = .always,
        tornWindowBytes: UInt64 = 48 + (4 << 20),
        createdMs: Int64 = 1_700_000_000_000,
        previousChain: UInt32 = 0
    ) {
        header = SegmentHeader(
            databaseID: databaseID, salt: salt, firstLSN: firstLSN, createdMs: createdMs,
            policy: policy, tornWindowBytes: tornWindowBytes
        )
        bytes = header.encoded() + [UInt8](repeating: 0, count: WALFormat.firstFrameOffset - WALFormat.segmentHeaderBytes)
        chain = previousChain
        nextLSN = firstLSN
    }

    /// Appends one data frame holding `records` (one append call).
    @discardableResult
    mutating func frame(_ records: [WALRecord]) -> EncodedFrame {
        let frame = encoder.encodeData([records], firstLSN: nextLSN, salt: header.salt, previousBodyCRC: chain)
        frameOffsets.append(bytes.count)
        bytes += frame.bytes
        chain = frame.header.bodyCRC
        nextLSN += LSN(records.count)
        dataFrames += 1
        return frame
    }

    mutating func seal(nextLSN next: LSN? = nil) {
        let seal = FrameEncoder.encodeSeal(
            nextLSN: next ?? nextLSN, salt: header.salt, previousBodyCRC: chain,
            seal: SealBody(dataFrames: UInt32(dataFrames), dataBytes: UInt64(bytes.count - WALFormat.firstFrameOffset))
        )
        frameOffsets.append(bytes.count)
        bytes += seal.bytes
        chain = seal.header.bodyCRC
    }

    /// The file as the writer leaves it: preallocated to `size` with zeros.
    func preallocated(to size: Int) -> [UInt8] {
        bytes + [UInt8](repeating: 0, count: max(0, size - bytes.count))
    }

    var name: String { WALFormat.segmentName(firstLSN: header.firstLSN) }
}
