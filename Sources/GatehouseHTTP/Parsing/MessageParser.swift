internal import CHTTPParser

/// http_parser, the bytes waiting for it, and the message its callbacks are assembling: the
/// part the request and the response parsers share.
///
/// http_parser's state is a plain C struct with no pointers of its own; `data` (and the
/// assembly's `fedBytes`) point somewhere only during `http_parser_execute`, so between calls
/// the whole value is plain data: it may be copied, moved, or sent to another thread, which is
/// why it is Sendable although its C fields' types are not.
struct MessageParser: @unchecked Sendable {
    private var parser = http_parser()
    var arena = ByteArena()
    var message: MessageAssembly

    struct Step {
        /// Bytes http_parser took from the arena (already consumed there).
        var consumed: Int
        var error: http_errno
    }

    init(type: http_parser_type, bodyBytesMax: Int) {
        http_parser_init(&parser, type)
        message = MessageAssembly(bodyBytesMax: bodyBytesMax)
    }

    var httpMajor: Int { Int(parser.http_major) }
    var httpMinor: Int { Int(parser.http_minor) }
    var statusCode: Int { Int(parser.status_code) }
    var method: String { String(cString: http_method_str(http_method(rawValue: parser.method))) }
    /// The declared Content-Length, once the headers are complete; nil without one.
    var contentLength: UInt64? {
        parser.flags & UInt32(F_CONTENTLENGTH.rawValue) != 0 ? parser.content_length : nil
    }

    /// Runs http_parser over at most `limit` of the buffered bytes. It stops early, paused, at
    /// headers complete and at message complete; the pause is lifted here, so the next call
    /// carries on from there.
    mutating func execute(upTo limit: Int) -> Step {
        let consumed = Self.execute(&parser, &message, arena, limit)
        arena.consume(consumed)
        if message.chunkTerminatorMissing { return Step(consumed: consumed, error: HPE_CB_body) }
        var error = http_errno(rawValue: parser.http_errno)
        if error == HPE_PAUSED {
            http_parser_pause(&parser, 0)
            error = HPE_OK
        }
        return Step(consumed: consumed, error: error)
    }

    /// Tells http_parser the stream ended, which completes a body read until close.
    mutating func executeEndOfStream() -> http_errno {
        _ = withUnsafeMutablePointer(to: &message) { message in
            parser.data = UnsafeMutableRawPointer(message)
            defer { parser.data = nil }
            var settings = MessageAssembly.callbacks
            return http_parser_execute(&parser, &settings, nil, 0)
        }
        let error = http_errno(rawValue: parser.http_errno)
        return error == HPE_PAUSED ? HPE_OK : error
    }

    // Static, with each part passed on its own, so that the closures below touch three
    // distinct variables and no access to the whole parser overlaps another.
    private static func execute(
        _ parser: inout http_parser,
        _ message: inout MessageAssembly,
        _ arena: borrowing ByteArena,
        _ limit: Int
    ) -> Int {
        withUnsafeMutablePointer(to: &message) { message in
            parser.data = UnsafeMutableRawPointer(message)
            defer { parser.data = nil }
            var settings = MessageAssembly.callbacks
            return arena.withUnreadBytes(upTo: limit) { bytes in
                message.pointee.fedBytes = bytes
                defer { message.pointee.fedBytes = UnsafeRawBufferPointer(start: nil, count: 0) }
                // The end of the last chunk's CRLF, when the previous bytes stopped inside it.
                guard message.pointee.checkChunkTerminator(at: 0) else { return 0 }
                return http_parser_execute(&parser, &settings, bytes.baseAddress, bytes.count)
            }
        }
    }

    /// The headers gathered so far, as strings; values lose the whitespace around them
    /// (RFC 9110 §5.5), which http_parser leaves at their end.
    func headers() -> HTTPHeaders {
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(message.fields.count)
        for index in message.fields.indices {
            let (name, value) = message.field(index)
            fields.append((String(decoding: name, as: UTF8.self), String(decoding: Self.trimmed(value), as: UTF8.self)))
        }
        return HTTPHeaders(fields)
    }

    private static func trimmed(_ value: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var value = value
        while let last = value.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { value.removeLast() }
        return value
    }
}
