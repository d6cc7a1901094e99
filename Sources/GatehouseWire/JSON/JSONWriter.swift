/// Writes compact JSON (no spaces, members in order) into a byte buffer.
///
/// Answers are written straight into the connection's output bytes, so everything appends to
/// an `inout [UInt8]` and nothing builds intermediate `String`s. Non-ASCII text is written as
/// raw UTF-8: the wire is UTF-8, and `\u` escapes would only make lines longer.
public enum JSONWriter {
    public static func serialize(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        append(value, to: &out)
        return out
    }

    public static func string(_ value: JSONValue) -> String {
        String(decoding: serialize(value), as: UTF8.self)
    }

    /// Appends `value`. Recurses once per level of nesting; parsed values are bounded by the
    /// parser's depth limit and built ones by the code that builds them.
    public static func append(_ value: JSONValue, to out: inout [UInt8]) {
        switch value {
        case .null: appendASCII("null", to: &out)
        case .bool(let bool): appendASCII(bool ? "true" : "false", to: &out)
        case .number(let number): out.append(contentsOf: number.text.utf8)
        case .string(let string): appendString(string, to: &out)
        case .array(let elements): appendArray(elements, to: &out)
        case .object(let object): appendObject(object, to: &out)
        }
    }

    /// Writes `string` quoted, escaping only what JSON requires.
    public static func appendString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = string  // `withUTF8` may need to make the storage contiguous first
        string.withUTF8 { utf8 in
            if utf8.contains(where: needsEscape) {
                appendEscaped(utf8, to: &out)
            } else {
                out.append(contentsOf: utf8)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Writes the decimal digits of `value` without going through `String`: the digits are
    /// built backwards in a stack buffer and appended in one copy.
    public static func appendInt(_ value: Int64, to out: inout [UInt8]) {
        // 19 digits and a sign are enough for any Int64.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude  // the magnitude of Int64.min fits in UInt64
            var first = digits.count
            repeat {
                first -= 1
                digits[first] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude != 0
            if value < 0 {
                first -= 1
                digits[first] = UInt8(ascii: "-")
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[first...]))
        }
    }

    // MARK: Containers

    private static func appendArray(_ elements: [JSONValue], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            append(element, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    private static func appendObject(_ object: JSONObject, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        for (index, member) in object.members.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendString(member.key, to: &out)
            out.append(UInt8(ascii: ":"))
            append(member.value, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    // MARK: Strings

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Copies runs of plain bytes whole and escapes the bytes between them.
    private static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var runStart = 0
        for index in utf8.indices where needsEscape(utf8[index]) {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
            appendEscape(for: utf8[index], to: &out)
            runStart = index + 1
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
    }

    private static func appendEscape(for byte: UInt8, to out: inout [UInt8]) {
        let short: UInt8? =
            switch byte {
            case UInt8(ascii: "\""): UInt8(ascii: "\"")
            case UInt8(ascii: "\\"): UInt8(ascii: "\\")
            case 0x0A: UInt8(ascii: "n")
            case 0x0D: UInt8(ascii: "r")
            case 0x09: UInt8(ascii: "t")
            case 0x08: UInt8(ascii: "b")
            case 0x0C: UInt8(ascii: "f")
            default: nil
            }
        out.append(UInt8(ascii: "\\"))
        if let short {
            out.append(short)
        } else {
            // Only control characters below 0x20 get here, so two hex digits suffice.
            appendASCII("u00", to: &out)
            out.append(hexDigit(byte >> 4))
            out.append(hexDigit(byte & 0x0F))
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    private static func appendASCII(_ text: StaticString, to out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }
}
