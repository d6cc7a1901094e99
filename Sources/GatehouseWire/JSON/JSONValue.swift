/// A JSON value as Gatehouse reads and writes it.
///
/// Objects keep their members in order (answers are written in a stable, documented field
/// order) and numbers keep their literal text (a request `id` is echoed back exactly as sent).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON number, held as its literal text so it round-trips exactly.
public struct JSONNumber: Sendable, Equatable, CustomStringConvertible {
    /// The literal, always valid JSON number syntax.
    public let text: String

    /// Wraps text already known to be a valid JSON number literal (the parser's output).
    public init(uncheckedText text: String) {
        self.text = text
    }

    public init(_ value: Int64) {
        self.text = String(value)
    }

    public init(_ value: Int) {
        self.text = String(value)
    }

    /// A finite double; non-finite values have no JSON form and are written as `0`.
    public init(_ value: Double) {
        if value.isFinite {
            if value == value.rounded(.towardZero), abs(value) < 1e15 {
                self.text = String(Int64(value))
            } else {
                self.text = "\(value)"
            }
        } else {
            self.text = "0"
        }
    }

    public var description: String { text }

    /// The value as an exact integer: an integer literal that fits in `Int64`, or a literal
    /// with a fraction or exponent whose value is a whole number of magnitude at most 2^53.
    /// `nil` for anything else (fractions, out-of-range values).
    public var int64: Int64? {
        if let exact = Int64(text) { return exact }
        guard let value = Double(text), value.isFinite, value == value.rounded(.towardZero),
            abs(value) <= 9_007_199_254_740_992
        else { return nil }
        return Int64(value)
    }

    /// The value as a finite double; `nil` when the literal overflows (`1e400`).
    public var double: Double? {
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }
}

/// A JSON object with its members in order. Lookups return the last member with the key,
/// as JavaScript does, so a repeated key cannot mean two things at once.
public struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    public private(set) var members: [Member]

    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSONValue

        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    public init() {
        self.members = []
    }

    public init(members: [Member]) {
        self.members = members
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.members = elements.map { Member(key: $0.0, value: $0.1) }
    }

    public var isEmpty: Bool { members.isEmpty }
    public var count: Int { members.count }

    /// The value of the last member named `key`, or `nil` when there is none.
    public subscript(key: String) -> JSONValue? {
        get {
            for member in members.reversed() where member.key == key {
                return member.value
            }
            return nil
        }
        set {
            members.removeAll { $0.key == key }
            if let newValue {
                members.append(Member(key: key, value: newValue))
            }
        }
    }

    /// Appends a member without looking for an existing one (the builder's fast path).
    public mutating func append(_ key: String, _ value: JSONValue) {
        members.append(Member(key: key, value: value))
    }

    /// Puts a member first (an `id` filled in by a client goes at the front, where people look).
    public mutating func prepend(_ key: String, _ value: JSONValue) {
        members.insert(Member(key: key, value: value), at: 0)
    }

    /// Appends every member of `other` in order.
    public mutating func append(contentsOf other: JSONObject) {
        members.append(contentsOf: other.members)
    }

    public var keys: [String] { members.map(\.key) }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(floatLiteral value: Double) { self = .number(JSONNumber(value)) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .number(JSONNumber(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(members: elements.map { JSONObject.Member(key: $0.0, value: $0.1) }))
    }
}

extension JSONValue {
    public static func int(_ value: Int64) -> JSONValue { .number(JSONNumber(value)) }
    public static func int(_ value: Int) -> JSONValue { .number(JSONNumber(value)) }
    public static func double(_ value: Double) -> JSONValue { .number(JSONNumber(value)) }

    /// `null` for `nil`, otherwise the wrapped value.
    public static func optional<T>(_ value: T?, _ wrap: (T) -> JSONValue) -> JSONValue {
        value.map(wrap) ?? .null
    }

    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let bool) = self { return bool }
        return nil
    }

    public var numberValue: JSONNumber? {
        if case .number(let number) = self { return number }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The JSON type's name, for error messages (`"expected a string, got number"`).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
