/// A frame ready to be written: header, body and zero padding in one buffer.
struct EncodedFrame: Sendable {
    var bytes: [UInt8]
    var header: FrameHeader
}

/// Builds frames. One per writing thread: it owns a deflate stream and a reusable buffer.
final class FrameEncoder {
    private let deflater = Deflater()
    private var raw: [UInt8] = []

    /// A data frame holding `groups` (each one append call, all LSN-consecutive from `firstLSN`).
    /// Raw deflate when the body is at least 256 bytes and shrinks; stored otherwise.
    func encodeData<Group: Sequence<LogRecord>>(_ groups: some Sequence<Group>, firstLSN: LSN, salt: UInt32, previousBodyCRC: UInt32)
        -> EncodedFrame
    {
        raw.removeAll(keepingCapacity: true)
        var count: UInt32 = 0
        for group in groups {
            for record in group {
                FrameBody.append(record, to: &raw)
                count += 1
            }
        }
        precondition(count > 0, "a data frame holds at least one record")
        var codec = FrameHeader.Codec.stored
        var compressed: [UInt8] = []
        if raw.count >= WALFormat.compressionThreshold {
            compressed = raw.withUnsafeBytes { deflater.compress($0) }
            if compressed.count < raw.count { codec = .deflate }
        }
        return codec == .deflate
            ? Self.frame(body: compressed, rawLength: raw.count, codec: .deflate, kind: .data, firstLSN: firstLSN, count: count, salt: salt, previous: previousBodyCRC)
            : Self.frame(body: raw, rawLength: raw.count, codec: .stored, kind: .data, firstLSN: firstLSN, count: count, salt: salt, previous: previousBodyCRC)
    }

    /// The seal that ends a segment: the next segment starts at `nextLSN`.
    static func encodeSeal(nextLSN: LSN, salt: UInt32, previousBodyCRC: UInt32, seal: SealBody) -> EncodedFrame {
        let body = seal.encoded()
        return frame(body: body, rawLength: body.count, codec: .stored, kind: .seal, firstLSN: nextLSN, count: 0, salt: salt, previous: previousBodyCRC)
    }

    private static func frame(
        body: [UInt8], rawLength: Int, codec: FrameHeader.Codec, kind: FrameHeader.Kind,
        firstLSN: LSN, count: UInt32, salt: UInt32, previous: UInt32
    ) -> EncodedFrame {
        let header = FrameHeader(
            bodyLength: UInt32(body.count), rawLength: UInt32(rawLength), firstLSN: firstLSN, recordCount: count,
            codec: codec, kind: kind, salt: salt, previousBodyCRC: previous, bodyCRC: CRC32C.checksum(body)
        )
        var bytes = header.encoded()
        bytes.reserveCapacity(header.footprint)
        bytes.append(contentsOf: body)
        bytes.append(contentsOf: repeatElement(0, count: header.footprint - bytes.count))
        return EncodedFrame(bytes: bytes, header: header)
    }
}

/// The records inside a frame body: `u32 payload length | u16 kind | payload`, back to back.
enum FrameBody {
    static func append(_ record: LogRecord, to body: inout [UInt8]) {
        body.appendLE32(UInt32(record.payload.count))
        body.appendLE16(record.kind)
        body.append(contentsOf: record.payload)
    }

    /// Exactly `count` records filling `raw` to the last byte.
    static func records(_ raw: UnsafeRawBufferPointer, count: UInt32) -> Result<[LogRecord], FrameBodyProblem> {
        var records: [LogRecord] = []
        records.reserveCapacity(Int(min(count, UInt32(raw.count / LogRecord.headerBytes + 1))))
        var offset = 0
        for index in 0..<Int(count) {
            guard raw.count - offset >= LogRecord.headerBytes else {
                return .failure(FrameBodyProblem(description: "record \(index) of \(count) is cut off at body byte \(offset)"))
            }
            let length = Int(raw.loadLE32(offset))
            let kind = raw.loadLE16(offset + 4)
            offset += LogRecord.headerBytes
            guard length <= raw.count - offset else {
                return .failure(FrameBodyProblem(description: "record \(index) declares \(length) bytes, only \(raw.count - offset) remain"))
            }
            records.append(LogRecord(kind: kind, payload: Array(raw[offset..<offset + length])))
            offset += length
        }
        guard offset == raw.count else {
            return .failure(FrameBodyProblem(description: "\(raw.count - offset) bytes after the last of \(count) records"))
        }
        return .success(records)
    }
}

struct FrameBodyProblem: Error, Equatable, CustomStringConvertible {
    let description: String
}
