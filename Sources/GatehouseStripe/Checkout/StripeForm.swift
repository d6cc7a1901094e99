import GatehouseBase

/// `application/x-www-form-urlencoded` as Stripe's libraries write it: bytes outside
/// `A–Z a–z 0–9 - . _ ~` percent-encoded in upper-case hex, a space as `+`, and the square
/// brackets of Stripe's nested keys (`metadata[plan]`) left as they are, which Stripe reads the
/// same and keeps keys legible.
public enum StripeForm {
    public static func encode(_ fields: [(key: String, value: String)]) -> [UInt8] {
        var out: [UInt8] = []
        for (index, field) in fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: "&")) }
            append(field.key, to: &out, keepingBrackets: true)
            out.append(UInt8(ascii: "="))
            append(field.value, to: &out, keepingBrackets: false)
        }
        return out
    }

    /// The fields of a form body in order, `+` read as a space; `nil` for a broken escape or
    /// bytes that are not UTF-8 once decoded.
    public static func decode(_ body: some Collection<UInt8>) -> [(key: String, value: String)]? {
        var fields: [(key: String, value: String)] = []
        for pair in Array(body).split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = decoded(parts[0]), let value = parts.count == 2 ? decoded(parts[1]) : "" else { return nil }
            fields.append((key, value))
        }
        return fields
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func append(_ text: String, to out: inout [UInt8], keepingBrackets: Bool) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            case UInt8(ascii: "[") where keepingBrackets, UInt8(ascii: "]") where keepingBrackets:
                out.append(byte)
            case UInt8(ascii: " "):
                out.append(UInt8(ascii: "+"))
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
    }

    private static func decoded(_ text: ArraySlice<UInt8>) -> String? {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            index += 1
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                continue
            }
            guard index + 2 <= text.endIndex,
                let escaped = Hex.decode(String(decoding: text[index..<(index + 2)], as: UTF8.self))
            else { return nil }
            bytes.append(contentsOf: escaped)
            index += 2
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
