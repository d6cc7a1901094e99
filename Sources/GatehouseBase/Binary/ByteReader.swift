/// Reads what ``ByteWriter`` wrote. Every read is bounds-checked and throws
/// ``ByteReaderError`` instead of trapping, because the bytes come from disk and may be damaged.
///
/// Its methods are `@inlinable` for the same reason as ``ByteWriter``'s: replay and snapshot
/// loading read millions of small fields.
public struct ByteReader {
    @usableFromInline let bytes: [UInt8]
    @usableFromInline var position: Int
    @usableFromInline let end: Int

    @inlinable public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.position = 0
        self.end = bytes.count
    }

    public init(_ bytes: ArraySlice<UInt8>) {
        self.init(Array(bytes))
    }

    /// How many bytes have been read.
    @inlinable public var offset: Int { position }
    @inlinable public var remaining: Int { end - position }
    @inlinable public var isAtEnd: Bool { position == end }

    @inlinable public mutating func readUInt8() throws(ByteReaderError) -> UInt8 {
        guard offset < end else { throw ByteReaderError.truncated(at: offset) }
        defer { position += 1 }
        return bytes[position]
    }

    @inlinable public mutating func readBool() throws(ByteReaderError) -> Bool {
        switch try readUInt8() {
        case 0: return false
        case 1: return true
        default: throw ByteReaderError.invalid("boolean", at: offset - 1)
        }
    }

    @inlinable public mutating func readUInt16() throws(ByteReaderError) -> UInt16 {
        UInt16(truncatingIfNeeded: try readFixed(2))
    }

    @inlinable public mutating func readUInt32() throws(ByteReaderError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readFixed(4))
    }

    @inlinable public mutating func readUInt64() throws(ByteReaderError) -> UInt64 {
        try readFixed(8)
    }

    @inlinable mutating func readFixed(_ width: Int) throws(ByteReaderError) -> UInt64 {
        guard remaining >= width else { throw ByteReaderError.truncated(at: offset) }
        var value: UInt64 = 0
        for index in 0..<width {
            value |= UInt64(bytes[position + index]) << (8 * index)
        }
        position += width
        return value
    }

    @inlinable public mutating func readVarUInt() throws(ByteReaderError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let start = offset
            let byte = try readUInt8()
            guard shift < 64, shift < 63 || byte <= 1 else { throw ByteReaderError.invalid("varint", at: start) }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    @inlinable public mutating func readVarInt() throws(ByteReaderError) -> Int64 {
        let raw = try readVarUInt()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// A varint that must fit an `Int` count or length no larger than what is left to read.
    @inlinable public mutating func readCount(maximum: Int = Int.max) throws(ByteReaderError) -> Int {
        let start = offset
        let raw = try readVarUInt()
        guard raw <= UInt64(min(maximum, Int.max)) else { throw ByteReaderError.invalid("count", at: start) }
        return Int(raw)
    }

    @inlinable public mutating func readBytes() throws(ByteReaderError) -> [UInt8] {
        let start = offset
        let count = try readCount()
        guard count <= remaining else { throw ByteReaderError.truncated(at: start) }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    /// Moves past a length-prefixed UTF-8 string, checking it without keeping it.
    @inlinable public mutating func skipString() throws(ByteReaderError) {
        let start = position
        let count = try readCount()
        guard count <= remaining else { throw ByteReaderError.truncated(at: start) }
        let range = position..<position + count
        let valid = bytes.withUnsafeBufferPointer { buffer in
            Self.isValidUTF8(UnsafeBufferPointer(rebasing: buffer[range]))
        }
        guard valid else { throw ByteReaderError.invalid("UTF-8 string", at: start) }
        position += count
    }

    /// A length-prefixed UTF-8 string, validated straight from the buffer (a short string costs
    /// no allocation at all).
    @inlinable public mutating func readString() throws(ByteReaderError) -> String {
        let start = position
        let count = try readCount()
        guard count <= remaining else { throw ByteReaderError.truncated(at: start) }
        let range = position..<position + count
        let string = bytes.withUnsafeBufferPointer { buffer -> String? in
            let slice = UnsafeBufferPointer(rebasing: buffer[range])
            // ASCII is valid UTF-8 as it is, and `String(decoding:)` builds it on a fast path;
            // `String(validating:)` is generic and looks up type metadata on every call.
            return Self.isASCII(slice) ? String(decoding: slice, as: UTF8.self) : String(validating: slice, as: UTF8.self)
        }
        guard let string else { throw ByteReaderError.invalid("UTF-8 string", at: start) }
        position += count
        return string
    }

    /// Whether every byte is below 0x80 (most stored strings: ids, names, codes).
    @inlinable static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var combined: UInt8 = 0
        for byte in bytes { combined |= byte }
        return combined < 0x80
    }

    @inlinable static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        isASCII(bytes) || String(validating: bytes, as: UTF8.self) != nil
    }

    @inlinable public mutating func readOptional<T>(_ read: (inout ByteReader) throws(ByteReaderError) -> T) throws(ByteReaderError) -> T? {
        guard try readBool() else { return nil }
        return try read(&self)
    }

    /// A varint count, then that many elements. Each element takes at least one byte, so a
    /// damaged count cannot make us reserve more than the input could hold.
    @inlinable public mutating func readArray<T>(_ read: (inout ByteReader) throws(ByteReaderError) -> T) throws(ByteReaderError) -> [T] {
        let start = offset
        let count = try readCount()
        guard count <= remaining else { throw ByteReaderError.truncated(at: start) }
        var result: [T] = []
        result.reserveCapacity(count)
        for _ in 0..<count { result.append(try read(&self)) }
        return result
    }

    /// Exactly `count` raw bytes (fixed-size fields).
    @inlinable public mutating func readRaw(_ count: Int) throws(ByteReaderError) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw ByteReaderError.truncated(at: offset) }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    /// The bytes between two offsets already read (a value's encoding, kept as it is).
    @inlinable public func bytes(in range: Range<Int>) -> [UInt8] {
        precondition(range.lowerBound >= 0 && range.upperBound <= offset, "only bytes already read")
        return Array(bytes[range])
    }

    /// Fails unless every byte was read: trailing bytes mean the reader and writer disagree.
    @inlinable public func expectEnd() throws(ByteReaderError) {
        guard isAtEnd else { throw ByteReaderError.invalid("trailing bytes", at: offset) }
    }
}

/// Damaged or misread binary data.
public enum ByteReaderError: Error, Sendable, Equatable, CustomStringConvertible {
    case truncated(at: Int)
    case invalid(String, at: Int)

    public var description: String {
        switch self {
        case .truncated(let offset): "data ends early at byte \(offset)"
        case .invalid(let what, let offset): "invalid \(what) at byte \(offset)"
        }
    }
}
