import GatehouseWire

/// Typed reads of a verified payload's fields: tolerant of fields it is not asked about, strict
/// about the type of those it is. An absent field and a JSON `null` both read as `nil`; a field
/// of the wrong type is an error naming it (`data.bundleId: expected a string, got number`).
struct PayloadReader {
    let object: JSONObject
    /// The object's place in the payload, the prefix of field names in errors.
    let path: String

    init(_ object: JSONObject, path: String = "") {
        self.object = object
        self.path = path
    }

    private func name(_ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    private func value(_ key: String) -> JSONValue? {
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    private func mismatch(_ key: String, _ expected: String, _ value: JSONValue) -> AppStoreVerificationError {
        .invalidSignature("payload \(name(key)): expected \(expected), got \(value.typeName)")
    }

    func string(_ key: String) throws(AppStoreVerificationError) -> String? {
        guard let value = value(key) else { return nil }
        guard let string = value.stringValue else { throw mismatch(key, "a string", value) }
        return string
    }

    func requiredString(_ key: String) throws(AppStoreVerificationError) -> String {
        guard let string = try string(key) else { throw .invalidSignature("payload \(name(key)): missing") }
        return string
    }

    /// A string-valued kind such as ``AppStoreEnvironment``.
    func kind<Kind: RawRepresentable>(_ key: String, as type: Kind.Type) throws(AppStoreVerificationError) -> Kind?
    where Kind.RawValue == String {
        try string(key).flatMap(Kind.init(rawValue:))
    }

    /// An integer; a literal with a fraction that is not whole is a type error.
    func int64(_ key: String) throws(AppStoreVerificationError) -> Int64? {
        guard let value = value(key) else { return nil }
        guard let int = value.numberValue?.int64 else { throw mismatch(key, "an integer", value) }
        return int
    }

    func int(_ key: String) throws(AppStoreVerificationError) -> Int? {
        guard let int = try int64(key) else { return nil }
        guard let small = Int(exactly: int) else { throw .invalidSignature("payload \(name(key)): out of range") }
        return small
    }

    /// A UNIX time in milliseconds. Fractions are truncated, as Apple's libraries do for the
    /// fractional dates StoreKit Testing in Xcode writes.
    func timestamp(_ key: String) throws(AppStoreVerificationError) -> Int64? {
        guard let value = value(key) else { return nil }
        guard let milliseconds = Self.timestamp(value) else { throw mismatch(key, "a timestamp", value) }
        return milliseconds
    }

    func bool(_ key: String) throws(AppStoreVerificationError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard let bool = value.boolValue else { throw mismatch(key, "a boolean", value) }
        return bool
    }

    func strings(_ key: String) throws(AppStoreVerificationError) -> [String]? {
        guard let value = value(key) else { return nil }
        guard let array = value.arrayValue else { throw mismatch(key, "an array", value) }
        var strings: [String] = []
        for (index, element) in array.enumerated() {
            guard let string = element.stringValue else { throw mismatch("\(key)[\(index)]", "a string", element) }
            strings.append(string)
        }
        return strings
    }

    func object(_ key: String) throws(AppStoreVerificationError) -> PayloadReader? {
        guard let value = value(key) else { return nil }
        guard let object = value.objectValue else { throw mismatch(key, "an object", value) }
        return PayloadReader(object, path: name(key))
    }

    /// A nested object decoded by `decode`.
    func object<Decoded>(_ key: String, _ decode: (PayloadReader) throws(AppStoreVerificationError) -> Decoded)
        throws(AppStoreVerificationError) -> Decoded?
    {
        guard let reader = try object(key) else { return nil }
        return try decode(reader)
    }

    /// Milliseconds from a JSON number, truncating a fraction; `nil` for anything else or a
    /// value beyond ±2^53 when it has a fraction or exponent.
    static func timestamp(_ value: JSONValue) -> Int64? {
        guard let number = value.numberValue else { return nil }
        if let exact = number.int64 { return exact }
        guard let double = number.double, abs(double) <= 9_007_199_254_740_992 else { return nil }
        return Int64(double.rounded(.towardZero))
    }
}
