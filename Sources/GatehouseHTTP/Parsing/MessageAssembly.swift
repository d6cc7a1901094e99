internal import CHTTPParser

/// What http_parser's callbacks gather of one message (request or response), and the events
/// they saw, for the parser that drives it to act on once `http_parser_execute` returns.
///
/// The callbacks only copy bytes and raise flags; every decision is taken by the driver in
/// plain Swift, between calls, because the parser pauses at the two moments that need one:
/// headers complete and message complete.
struct MessageAssembly {
    enum Phase: Equatable {
        /// Between messages: no byte of the next one seen (leading CRLFs do not start one).
        case idle
        case headers
        case body
    }

    var phase = Phase.idle
    /// Raised by the callback, lowered by the driver once it has checked the headers.
    var headersCompleted = false
    var messageCompleted = false
    var keepAlive = false
    /// For a response to HEAD: the headers announce a body that does not follow.
    var skipsBody = false

    var target: [UInt8] = []
    /// Every header's name and value bytes, back to back; `fields` marks where each starts.
    var fieldBytes: [UInt8] = []
    var fields: [(nameStart: Int, valueStart: Int)] = []
    private var isInValue = false
    var body: [UInt8] = []

    /// The sum of the chunk sizes announced so far, refused as soon as it passes the limit.
    private var chunkedBodyBytes = 0
    let bodyBytesMax: Int
    private(set) var chunkedBodyTooLarge = false

    /// The bytes http_parser is being given, while it is.
    var fedBytes = UnsafeRawBufferPointer(start: nil, count: 0)
    /// How much of the CRLF that must follow a chunk's data is still to be seen (2, 1 or 0).
    /// The Debian build of http_parser does not check it, and a chunk that ends where one
    /// parser says and another does not is a way to smuggle a request.
    private(set) var chunkTerminatorPending = 0
    private(set) var chunkTerminatorMissing = false

    init(bodyBytesMax: Int) {
        self.bodyBytesMax = bodyBytesMax
    }

    /// Ready for the next message; keeps the arrays' storage unless a body made them big.
    mutating func reset() {
        phase = .idle
        (headersCompleted, messageCompleted, keepAlive, skipsBody, isInValue) = (false, false, false, false, false)
        target.removeAll(keepingCapacity: true)
        fieldBytes.removeAll(keepingCapacity: true)
        fields.removeAll(keepingCapacity: true)
        body = []
        chunkedBodyBytes = 0
        (chunkTerminatorPending, chunkTerminatorMissing) = (0, false)
    }

    // MARK: What the callbacks do

    mutating func beginMessage() {
        phase = .headers
    }

    mutating func appendTarget(_ bytes: UnsafeRawBufferPointer) {
        target.append(contentsOf: bytes)
    }

    /// A name may arrive in pieces (split across reads); a new one starts after a value.
    mutating func appendFieldName(_ bytes: UnsafeRawBufferPointer) {
        // Trailers after a chunked body pass through the same callbacks; they are dropped.
        guard phase == .headers else { return }
        if fields.isEmpty || isInValue {
            fields.append((nameStart: fieldBytes.count, valueStart: fieldBytes.count))
            isInValue = false
        }
        fieldBytes.append(contentsOf: bytes)
        fields[fields.count - 1].valueStart = fieldBytes.count
    }

    mutating func appendFieldValue(_ bytes: UnsafeRawBufferPointer) {
        guard phase == .headers, !fields.isEmpty else { return }
        isInValue = true
        fieldBytes.append(contentsOf: bytes)
    }

    mutating func completeHeaders(keepAlive: Bool) {
        self.keepAlive = keepAlive
        headersCompleted = true
        phase = .body
    }

    /// False refuses the body: a chunk's data is not followed by CRLF.
    mutating func appendBody(_ bytes: UnsafeRawBufferPointer, endsChunk: Bool) -> Bool {
        body.append(contentsOf: bytes)
        guard endsChunk, let end = bytes.baseAddress.map({ $0 + bytes.count }), let fed = fedBytes.baseAddress else { return true }
        chunkTerminatorPending = 2
        return checkChunkTerminator(at: end - fed)
    }

    /// Checks what of the pending CRLF lies in the bytes being fed, from `offset`; the rest is
    /// checked at the start of the next bytes (`offset` 0).
    mutating func checkChunkTerminator(at offset: Int) -> Bool {
        var offset = offset
        while chunkTerminatorPending > 0, offset < fedBytes.count {
            guard fedBytes[offset] == (chunkTerminatorPending == 2 ? UInt8(ascii: "\r") : UInt8(ascii: "\n")) else {
                chunkTerminatorMissing = true
                return false
            }
            chunkTerminatorPending -= 1
            offset += 1
        }
        return true
    }

    /// False refuses the chunk: its size takes the body past the limit.
    mutating func announceChunk(size: UInt64) -> Bool {
        guard size <= UInt64(bodyBytesMax - chunkedBodyBytes) else {
            chunkedBodyTooLarge = true
            return false
        }
        chunkedBodyBytes += Int(size)
        return true
    }

    mutating func completeMessage() {
        messageCompleted = true
        phase = .idle
    }

    // MARK: Reading the result

    /// The name and value bytes of header `index`.
    func field(_ index: Int) -> (name: ArraySlice<UInt8>, value: ArraySlice<UInt8>) {
        let (nameStart, valueStart) = fields[index]
        let valueEnd = index + 1 < fields.count ? fields[index + 1].nameStart : fieldBytes.count
        return (fieldBytes[nameStart..<valueStart], fieldBytes[valueStart..<valueEnd])
    }
}

extension MessageAssembly {
    /// The callbacks, which find the assembly through `parser.data`; they hold no state of
    /// their own, so one table serves every parser.
    static var callbacks: http_parser_settings {
        var settings = http_parser_settings()
        settings.on_message_begin = { parser in
            MessageAssembly.assembly(of: parser).pointee.beginMessage()
            return 0
        }
        settings.on_url = { parser, at, length in
            MessageAssembly.assembly(of: parser).pointee.appendTarget(UnsafeRawBufferPointer(start: at, count: length))
            return 0
        }
        settings.on_header_field = { parser, at, length in
            MessageAssembly.assembly(of: parser).pointee.appendFieldName(UnsafeRawBufferPointer(start: at, count: length))
            return 0
        }
        settings.on_header_value = { parser, at, length in
            MessageAssembly.assembly(of: parser).pointee.appendFieldValue(UnsafeRawBufferPointer(start: at, count: length))
            return 0
        }
        settings.on_headers_complete = { parser in
            let assembly = MessageAssembly.assembly(of: parser)
            assembly.pointee.completeHeaders(keepAlive: http_should_keep_alive(parser) != 0)
            http_parser_pause(parser, 1)
            // 1 tells http_parser that no body follows, whatever the headers say.
            return assembly.pointee.skipsBody ? 1 : 0
        }
        settings.on_body = { parser, at, length in
            // A chunk's data is complete when http_parser has no more of it to read.
            let endsChunk = parser!.pointee.flags & UInt32(F_CHUNKED.rawValue) != 0 && parser!.pointee.content_length == 0
            let bytes = UnsafeRawBufferPointer(start: at, count: length)
            return MessageAssembly.assembly(of: parser).pointee.appendBody(bytes, endsChunk: endsChunk) ? 0 : 1
        }
        settings.on_chunk_header = { parser in
            // http_parser leaves the announced chunk size in content_length here.
            MessageAssembly.assembly(of: parser).pointee.announceChunk(size: parser!.pointee.content_length) ? 0 : 1
        }
        settings.on_message_complete = { parser in
            MessageAssembly.assembly(of: parser).pointee.completeMessage()
            http_parser_pause(parser, 1)
            return 0
        }
        return settings
    }

    fileprivate static func assembly(of parser: UnsafeMutablePointer<http_parser>?) -> UnsafeMutablePointer<MessageAssembly> {
        parser!.pointee.data.assumingMemoryBound(to: MessageAssembly.self)
    }
}
