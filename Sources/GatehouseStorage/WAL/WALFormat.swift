import GatehouseBase

/// Sizes and constants of the log's on-disk format (docs/data-format.md, "Segments").
enum WALFormat {
    static let segmentMagic: [UInt8] = Array("GHWALSEG".utf8)
    static let version: UInt16 = 1
    static let checksumCRC32C: UInt8 = 1
    /// The segment header's own bytes; the rest of the first 4 KiB is zero.
    static let segmentHeaderBytes = 64
    /// Frames start here, so the header never shares a sector with a frame write.
    static let firstFrameOffset = 4096
    static let frameHeaderBytes = 48
    /// "WALF" when read as ASCII from the file.
    static let frameMarker: UInt32 = 0x464C_4157
    static let sealBodyBytes = 16
    static let sealFrameBytes = frameHeaderBytes + sealBodyBytes
    /// Frames start at multiples of 8, so a length field never straddles a sector.
    static let alignment = 8
    /// Frames whose raw body is smaller than this are stored uncompressed.
    static let compressionThreshold = 256
    /// The largest raw frame body any reader accepts, whatever the writer's options were.
    static let rawFrameBytesLimit = 64 << 20
    static let segmentSuffix = ".wal"
    static let preparedSegmentName = "next.tmp"

    static func aligned(_ count: Int) -> Int {
        (count + alignment - 1) & ~(alignment - 1)
    }

    /// `<first LSN as 16 hex digits>.wal`.
    static func segmentName(firstLSN: LSN) -> String {
        Hex.fixed16(firstLSN) + segmentSuffix
    }

    /// The first LSN a segment's name declares, or nil if the name is not a segment's.
    static func firstLSN(ofSegmentName name: String) -> LSN? {
        guard name.hasSuffix(segmentSuffix) else { return nil }
        let stem = name.dropLast(segmentSuffix.count)
        guard stem.utf8.count == 16, stem.utf8.allSatisfy({ isLowercaseHexDigit($0) }) else { return nil }
        return LSN(stem, radix: 16)
    }

    private static func isLowercaseHexDigit(_ character: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(character) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(character)
    }

    static func policyCode(_ policy: DurabilityPolicy) -> UInt8 {
        switch policy {
        case .always: 0
        case .everysec: 1
        case .none: 2
        }
    }

    static func policy(code: UInt8) -> DurabilityPolicy? {
        switch code {
        case 0: .always
        case 1: .everysec
        case 2: DurabilityPolicy.none
        default: nil
        }
    }
}

/// Reads little-endian integers at fixed offsets of a buffer whose bounds were checked first.
extension UnsafeRawBufferPointer {
    @inline(__always)
    func loadLE16(_ offset: Int) -> UInt16 { UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self)) }
    @inline(__always)
    func loadLE32(_ offset: Int) -> UInt32 { UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    @inline(__always)
    func loadLE64(_ offset: Int) -> UInt64 { UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
}

extension Array where Element == UInt8 {
    mutating func appendLE16(_ value: UInt16) { Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) } }
    mutating func appendLE32(_ value: UInt32) { Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) } }
    mutating func appendLE64(_ value: UInt64) { Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) } }

    mutating func storeLE32(_ value: UInt32, at offset: Int) {
        withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
    }
}
