/// Why a line is not JSON: the byte offset where parsing stopped and a short reason for people.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Offset of the offending byte from the start of the input.
    public let offset: Int
    public let reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "\(reason) at byte \(offset)" }
}

/// A strict RFC 8259 parser over raw bytes.
///
/// Strict because requests come from programs we did not write: anything a lenient parser
/// would guess at (comments, trailing commas, `NaN`, `01`, invalid UTF-8, lone surrogates)
/// is refused rather than given a meaning. Numbers keep their literal text and are never
/// converted here, so a request `id` is echoed exactly and range checks happen where the
/// field's meaning is known.
///
/// The parser is iterative with an explicit stack, so `maxDepth` bounds memory rather than
/// the thread's stack, and hostile nesting fails at the first level past the limit.
public enum JSONParser {
    public static let defaultMaxDepth = 128

    /// Parses exactly one JSON value surrounded by optional whitespace (space, \t, \n, \r);
    /// anything else after it is an error.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth) throws(JSONParseError)
        -> JSONValue
    {
        let result = bytes.withMemoryRebound(to: UInt8.self) { input in
            Result { () throws(JSONParseError) -> JSONValue in
                var parser = Parser(input: input, maxDepth: maxDepth)
                return try parser.parseDocument()
            }
        }
        return try result.get()
    }

    /// Parses one JSON value that starts at `offset` (after optional whitespace) and answers it
    /// with the offset just past it, leaving whatever follows to the caller. The quick request
    /// readers (``SyncScan``, ``TransactScan``) read the common forms themselves and hand the
    /// rest to this, so a line means the same to them as to ``parse(_:maxDepth:)``.
    public static func parseValue(_ bytes: UnsafeRawBufferPointer, from offset: Int, maxDepth: Int = defaultMaxDepth)
        throws(JSONParseError) -> (value: JSONValue, end: Int)
    {
        precondition(offset >= 0 && offset <= bytes.count, "offset outside the bytes")
        let result = bytes.withMemoryRebound(to: UInt8.self) { input in
            Result { () throws(JSONParseError) -> (value: JSONValue, end: Int) in
                var parser = Parser(input: input, maxDepth: maxDepth)
                parser.index = offset
                let value = try parser.parseValue()
                return (value, parser.index)
            }
        }
        return try result.get()
    }

    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) -> JSONValue in try parse(raw, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    public static func parse(_ string: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        var string = string  // `withUTF8` may need to make the storage contiguous first
        let result = string.withUTF8 { utf8 in
            Result { () throws(JSONParseError) -> JSONValue in
                try parse(UnsafeRawBufferPointer(utf8), maxDepth: maxDepth)
            }
        }
        return try result.get()
    }
}

// MARK: - The parser state

// Nested in `JSONParser` so that these names cannot collide with other types of the module.
extension JSONParser {
    /// One open array or object: where its items start on the shared stack.
    fileprivate struct Frame {
        var isObject: Bool
        var valueStart: Int
    }

    fileprivate struct Parser {
        let input: UnsafeBufferPointer<UInt8>
        let maxDepth: Int
        var index = 0

        // The innermost open container, and the ones around it. Keeping the innermost apart means
        // a flat request object never allocates a stack of frames.
        var current: Frame?
        var enclosing: [Frame] = []
        /// The items of every open container, so a container allocates only its final array when
        /// it closes, whatever the nesting. An object's keys sit here as strings before their values.
        var values: [JSONValue] = []
        /// Reused for strings with escapes, so each escaped string costs one allocation (its own).
        var scratch: [UInt8] = []

        init(input: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
            self.input = input
            self.maxDepth = maxDepth
        }

        mutating func parseDocument() throws(JSONParseError) -> JSONValue {
            try finish(parseValue())
        }

        /// The driver: a finished value goes onto its container's stack, `nil` means a container
        /// just opened and its first item (or its end) comes next.
        mutating func parseValue() throws(JSONParseError) -> JSONValue {
            var value = try parseValueOrOpen()
            while true {
                if let complete = value {
                    guard let frame = current else { return complete }
                    values.append(complete)
                    value = try parseAfterItem(in: frame)
                } else {
                    value = try parseFirstItem(in: current!)
                }
            }
        }

        private mutating func finish(_ value: JSONValue) throws(JSONParseError) -> JSONValue {
            skipWhitespace()
            guard index == input.count else { throw failure("trailing characters after the value") }
            return value
        }

        /// After `[` or `{`: either the container closes at once or its first item starts.
        private mutating func parseFirstItem(in frame: Frame) throws(JSONParseError) -> JSONValue? {
            skipWhitespace()
            if index < input.count, input[index] == (frame.isObject ? Byte.closeBrace : Byte.closeBracket) {
                index += 1
                return closeContainer()
            }
            if frame.isObject { try parseKeyAndColon() }
            return try parseValueOrOpen()
        }

        /// After an item: a comma and the next item, or the end of the container.
        private mutating func parseAfterItem(in frame: Frame) throws(JSONParseError) -> JSONValue? {
            skipWhitespace()
            let close: UInt8 = frame.isObject ? Byte.closeBrace : Byte.closeBracket
            guard index < input.count else { throw failure("unexpected end of input") }
            switch input[index] {
            case Byte.comma:
                index += 1
                if frame.isObject { try parseKeyAndColon() }
                return try parseValueOrOpen()
            case close:
                index += 1
                return closeContainer()
            default:
                throw failure(frame.isObject ? "expected ',' or '}'" : "expected ',' or ']'")
            }
        }

        private mutating func parseKeyAndColon() throws(JSONParseError) {
            skipWhitespace()
            guard index < input.count else { throw failure("unexpected end of input") }
            guard input[index] == Byte.quote else { throw failure("expected a string key") }
            index += 1
            values.append(.string(try parseStringBody()))
            skipWhitespace()
            guard index < input.count, input[index] == Byte.colon else { throw failure("expected ':'") }
            index += 1
        }

        /// A scalar is returned whole; `[` and `{` push a frame and return `nil`.
        private mutating func parseValueOrOpen() throws(JSONParseError) -> JSONValue? {
            skipWhitespace()
            guard index < input.count else { throw failure("unexpected end of input") }
            let byte = input[index]
            switch byte {
            case Byte.openBrace, Byte.openBracket:
                try openContainer(isObject: byte == Byte.openBrace)
                return nil
            case Byte.quote:
                index += 1
                return .string(try parseStringBody())
            case Byte.minus, Byte.digit0...Byte.digit9:
                return .number(try parseNumber())
            case UInt8(ascii: "t"):
                return try parseLiteral("true", .bool(true))
            case UInt8(ascii: "f"):
                return try parseLiteral("false", .bool(false))
            case UInt8(ascii: "n"):
                return try parseLiteral("null", .null)
            default:
                throw unexpectedCharacter()
            }
        }

        // MARK: Containers

        private mutating func openContainer(isObject: Bool) throws(JSONParseError) {
            if let current {
                guard enclosing.count + 1 < maxDepth else { throw failure("nesting deeper than \(maxDepth)") }
                enclosing.append(current)
            } else {
                guard maxDepth > 0 else { throw failure("nesting deeper than \(maxDepth)") }
                // A typical request has a dozen keys and values; reserving once avoids regrowing.
                values.reserveCapacity(16)
            }
            index += 1
            current = Frame(isObject: isObject, valueStart: values.count)
        }

        private mutating func closeContainer() -> JSONValue {
            let frame = current!
            current = enclosing.popLast()
            defer { values.removeSubrange(frame.valueStart...) }
            guard frame.isObject else { return .array(Array(values[frame.valueStart...])) }
            return .object(JSONObject(members: members(from: frame.valueStart)))
        }

        /// Pairs up the alternating keys and values an object left on the stack.
        private func members(from start: Int) -> [JSONObject.Member] {
            var members: [JSONObject.Member] = []
            members.reserveCapacity((values.count - start) / 2)
            for keyIndex in stride(from: start, to: values.count, by: 2) {
                guard case .string(let key) = values[keyIndex] else {
                    preconditionFailure("object key is not a string")
                }
                members.append(JSONObject.Member(key: key, value: values[keyIndex + 1]))
            }
            return members
        }

        // MARK: Literals and numbers

        private mutating func parseLiteral(_ literal: StaticString, _ value: JSONValue) throws(JSONParseError)
            -> JSONValue
        {
            let length = literal.utf8CodeUnitCount
            let matches =
                input.count - index >= length
                && UnsafeBufferPointer(rebasing: input[index..<index + length]).elementsEqual(
                    UnsafeBufferPointer(start: literal.utf8Start, count: length))
            guard matches else { throw failure("expected '\(literal)'") }
            index += length
            return value
        }

        /// `-? (0 | [1-9][0-9]*) (\.[0-9]+)? ([eE][+-]?[0-9]+)?`, kept as text.
        private mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
            let start = index
            if input[index] == Byte.minus { index += 1 }
            guard index < input.count, Self.isDigit(input[index]) else { throw failure("expected a digit after '-'") }
            if input[index] == Byte.digit0 {
                index += 1
                if index < input.count, Self.isDigit(input[index]) { throw failure("leading zeros are not allowed") }
            } else {
                skipDigits()
            }
            if index < input.count, input[index] == Byte.dot {
                index += 1
                try requireDigits(after: "'.'")
            }
            if index < input.count, input[index] | 0x20 == UInt8(ascii: "e") {
                index += 1
                if index < input.count, input[index] == Byte.plus || input[index] == Byte.minus { index += 1 }
                try requireDigits(after: "the exponent")
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<index]), as: UTF8.self)
            return JSONNumber(uncheckedText: text)
        }

        private mutating func requireDigits(after what: String) throws(JSONParseError) {
            guard index < input.count, Self.isDigit(input[index]) else {
                throw failure("expected a digit after \(what)")
            }
            skipDigits()
        }

        private mutating func skipDigits() {
            while index < input.count, Self.isDigit(input[index]) { index += 1 }
        }

        // MARK: Whitespace and errors

        private mutating func skipWhitespace() {
            while index < input.count {
                switch input[index] {
                case Byte.space, Byte.tab, Byte.newline, Byte.carriageReturn: index += 1
                default: return
                }
            }
        }

        func failure(_ reason: String) -> JSONParseError {
            JSONParseError(offset: index, reason: reason)
        }

        /// Names the byte at `index` the way a person would see it in their editor.
        private func unexpectedCharacter() -> JSONParseError {
            let byte = input[index]
            if byte >= 0x80 {
                guard let length = validUTF8SequenceLength(at: index) else { return failure("invalid UTF-8") }
                let bytes = UnsafeBufferPointer(rebasing: input[index..<index + length])
                let character = String(decoding: bytes, as: UTF8.self)
                return failure("unexpected character '\(character)'")
            }
            if byte < 0x20 || byte == 0x7F { return failure("unexpected control character \(Self.hex(byte))") }
            return failure("unexpected character '\(Character(Unicode.Scalar(byte)))'")
        }
    }
}

// MARK: - Strings

extension JSONParser.Parser {
    /// Parses a string whose opening quote is already consumed. The common case (no escapes)
    /// makes the `String` straight from the input bytes, validating as it scans.
    fileprivate mutating func parseStringBody() throws(JSONParseError) -> String {
        let start = index
        while index < input.count {
            let byte = input[index]
            if byte == Byte.quote {
                defer { index += 1 }
                return String(decoding: UnsafeBufferPointer(rebasing: input[start..<index]), as: UTF8.self)
            }
            if byte == Byte.backslash { return try parseEscapedString(from: start) }
            try skipStringByte(byte)
        }
        throw JSONParseError(offset: start - 1, reason: "unterminated string")
    }

    /// The slow path, entered at the first backslash: copies into `scratch`, decoding escapes.
    private mutating func parseEscapedString(from start: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var runStart = start
        while index < input.count {
            let byte = input[index]
            if byte == Byte.quote || byte == Byte.backslash {
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStart..<index]))
                index += 1
                if byte == Byte.quote { return String(decoding: scratch, as: UTF8.self) }
                try appendEscape()
                runStart = index
                continue
            }
            try skipStringByte(byte)
        }
        throw JSONParseError(offset: start - 1, reason: "unterminated string")
    }

    /// Moves past one plain character inside a string: ASCII other than controls, or a whole
    /// valid UTF-8 sequence.
    private mutating func skipStringByte(_ byte: UInt8) throws(JSONParseError) {
        if byte >= 0x80 {
            guard let length = validUTF8SequenceLength(at: index) else { throw failure("invalid UTF-8") }
            index += length
        } else if byte < 0x20 {
            throw failure("unescaped control character \(Self.hex(byte)) in string")
        } else {
            index += 1
        }
    }

    /// Decodes the escape after a backslash (already consumed) into `scratch`.
    private mutating func appendEscape() throws(JSONParseError) {
        guard index < input.count else { throw JSONParseError(offset: index, reason: "unterminated string") }
        let decoded: UInt8
        switch input[index] {
        case Byte.quote: decoded = Byte.quote
        case Byte.backslash: decoded = Byte.backslash
        case Byte.slash: decoded = Byte.slash
        case UInt8(ascii: "b"): decoded = 0x08
        case UInt8(ascii: "f"): decoded = 0x0C
        case UInt8(ascii: "n"): decoded = Byte.newline
        case UInt8(ascii: "r"): decoded = Byte.carriageReturn
        case UInt8(ascii: "t"): decoded = Byte.tab
        case UInt8(ascii: "u"):
            index += 1
            appendUTF8(try parseUnicodeEscape())
            return
        default:
            throw failure("invalid escape '\\\(Character(Unicode.Scalar(input[index])))'")
        }
        index += 1
        scratch.append(decoded)
    }

    /// `XXXX` after `\u`, joining a surrogate pair into one scalar. Lone surrogates have no
    /// UTF-8 form, so they are errors rather than replacement characters.
    private mutating func parseUnicodeEscape() throws(JSONParseError) -> Unicode.Scalar {
        let escapeStart = index - 2
        let first = try parseHex4()
        if let scalar = Unicode.Scalar(first) { return scalar }
        guard first < 0xDC00 else { throw JSONParseError(offset: escapeStart, reason: "unpaired surrogate") }
        guard input.count - index >= 2, input[index] == Byte.backslash, input[index + 1] == UInt8(ascii: "u") else {
            throw JSONParseError(offset: escapeStart, reason: "unpaired surrogate")
        }
        index += 2
        let second = try parseHex4()
        guard (0xDC00...0xDFFF).contains(second) else {
            throw JSONParseError(offset: escapeStart, reason: "unpaired surrogate")
        }
        return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard input.count - index >= 4 else { throw failure("expected four hex digits after '\\u'") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Self.hexValue(input[index]) else { throw failure("expected four hex digits after '\\u'") }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func appendUTF8(_ scalar: Unicode.Scalar) {
        for unit in UTF8.encode(scalar)! { scratch.append(unit) }
    }
}

// MARK: - UTF-8 validation

extension JSONParser.Parser {
    /// The length of the valid multi-byte UTF-8 sequence starting at `offset`, or `nil`.
    ///
    /// Follows the well-formed table of Unicode §3.9 (Table 3-7): the narrowed second-byte
    /// ranges after E0, ED, F0 and F4 are what reject overlong forms, encoded surrogates and
    /// scalars past U+10FFFF.
    fileprivate func validUTF8SequenceLength(at offset: Int) -> Int? {
        let lead = input[offset]
        let length: Int
        let secondRange: ClosedRange<UInt8>
        switch lead {
        case 0xC2...0xDF: (length, secondRange) = (2, 0x80...0xBF)
        case 0xE0: (length, secondRange) = (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (length, secondRange) = (3, 0x80...0xBF)
        case 0xED: (length, secondRange) = (3, 0x80...0x9F)
        case 0xF0: (length, secondRange) = (4, 0x90...0xBF)
        case 0xF1...0xF3: (length, secondRange) = (4, 0x80...0xBF)
        case 0xF4: (length, secondRange) = (4, 0x80...0x8F)
        default: return nil
        }
        guard input.count - offset >= length, secondRange.contains(input[offset + 1]) else { return nil }
        for continuation in (offset + 2)..<(offset + length) where input[continuation] & 0xC0 != 0x80 {
            return nil
        }
        return length
    }
}

// MARK: - Byte helpers

extension JSONParser.Parser {
    /// The bytes of JSON's syntax, kept inside `Parser` so the names cannot collide with
    /// anything else in the module.
    fileprivate enum Byte {
        static let tab = UInt8(ascii: "\t")
        static let newline = UInt8(ascii: "\n")
        static let carriageReturn = UInt8(ascii: "\r")
        static let space = UInt8(ascii: " ")
        static let quote = UInt8(ascii: "\"")
        static let plus = UInt8(ascii: "+")
        static let comma = UInt8(ascii: ",")
        static let minus = UInt8(ascii: "-")
        static let dot = UInt8(ascii: ".")
        static let slash = UInt8(ascii: "/")
        static let digit0 = UInt8(ascii: "0")
        static let digit9 = UInt8(ascii: "9")
        static let colon = UInt8(ascii: ":")
        static let openBracket = UInt8(ascii: "[")
        static let backslash = UInt8(ascii: "\\")
        static let closeBracket = UInt8(ascii: "]")
        static let openBrace = UInt8(ascii: "{")
        static let closeBrace = UInt8(ascii: "}")
    }

    @inline(__always)
    fileprivate static func isDigit(_ byte: UInt8) -> Bool {
        byte &- Byte.digit0 < 10
    }

    fileprivate static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case Byte.digit0...Byte.digit9: UInt32(byte - Byte.digit0)
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// `0x1F`, for bytes that have no printable form.
    fileprivate static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return "0x" + String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
    }
}
