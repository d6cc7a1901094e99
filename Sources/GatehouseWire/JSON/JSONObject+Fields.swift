public import GatehouseCore
import Synchronization

/// Typed, validating access to an object's fields. Every failure is `bad_request` with a
/// message naming the field by its path (`products[2].grants[0].amount: expected an integer`),
/// which is how PROTOCOL.md asks for wrong types, missing fields and out-of-range values.
public struct Fields: Sendable {
    public let object: JSONObject
    /// The path of this object inside the request, used as the prefix of field names in errors.
    public let path: String
    /// Set in a strict reading (``strictly(_:path:_:)``): where this object's asked-for keys are
    /// noted, and this object's place among the objects the reading reached.
    private let reads: KeyReads?
    private let visit: Int

    public init(_ object: JSONObject, path: String = "") {
        self.init(object, path: path, reads: nil)
    }

    private init(_ object: JSONObject, path: String, reads: KeyReads?) {
        self.object = object
        self.path = path
        self.reads = reads
        self.visit = reads?.visit(object, path: path) ?? 0
    }

    /// Reads `object` with `decode`, then refuses every key that `decode` never asked for, in
    /// `object` and in every object it reached through these fields (``object(_:)``,
    /// ``objects(_:maxCount:)`` and their optional forms), whatever its value, `null` included:
    /// `bad_request` naming the key's path (`products[0].entitelments: unknown key`). The set of
    /// known keys is what the decoder reads, so it cannot drift from it. A misspelled key would
    /// otherwise read as a missing one and quietly take its default.
    public static func strictly<T>(
        _ object: JSONObject, path: String = "", _ decode: (Fields) throws(GatehouseError) -> T
    ) throws(GatehouseError) -> T {
        let reads = KeyReads()
        let value = try decode(Fields(object, path: path, reads: reads))
        if let unknown = reads.firstUnknownKey() { throw .badField(unknown, "unknown key") }
        return value
    }

    public func name(_ key: String) -> String {
        Self.name(key, at: path)
    }

    fileprivate static func name(_ key: String, at path: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    /// The raw value, treating `null` as absent. Asking for a key makes it known to a strict
    /// reading, whether or not the object holds it.
    public func value(_ key: String) -> JSONValue? {
        reads?.ask(key, at: visit)
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    public func has(_ key: String) -> Bool { value(key) != nil }

    // MARK: Strings

    public func string(_ key: String) throws(GatehouseError) -> String {
        guard let value = value(key) else { throw .badField(name(key), "is required") }
        guard let string = value.stringValue else {
            throw .badField(name(key), "expected a string, got \(value.typeName)")
        }
        return string
    }

    public func optionalString(_ key: String) throws(GatehouseError) -> String? {
        guard has(key) else { return nil }
        return try string(key)
    }

    /// A string of `length` characters (counted as Unicode scalars would surprise people;
    /// these are `Character`s).
    public func string(_ key: String, length: ClosedRange<Int>) throws(GatehouseError) -> String {
        let string = try string(key)
        guard length.contains(string.count) else {
            throw .badField(name(key), "must be \(length.lowerBound)–\(length.upperBound) characters")
        }
        return string
    }

    public func optionalString(_ key: String, length: ClosedRange<Int>) throws(GatehouseError) -> String? {
        guard has(key) else { return nil }
        return try string(key, length: length)
    }

    /// A string that must be one of an enum's raw values.
    public func enumeration<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(GatehouseError)
        -> E where E.RawValue == String
    {
        let raw = try string(key)
        guard let value = E(rawValue: raw) else {
            let allowed = E.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw .badField(name(key), "must be one of \(allowed)")
        }
        return value
    }

    public func optionalEnumeration<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type)
        throws(GatehouseError) -> E? where E.RawValue == String
    {
        guard has(key) else { return nil }
        return try enumeration(key, type)
    }

    // MARK: Numbers

    public func int(_ key: String, in range: ClosedRange<Int64> = Int64.min...Int64.max) throws(GatehouseError)
        -> Int64
    {
        guard let value = value(key) else { throw .badField(name(key), "is required") }
        guard let number = value.numberValue else {
            throw .badField(name(key), "expected an integer, got \(value.typeName)")
        }
        guard let int = number.int64 else {
            throw .badField(name(key), "expected an integer in range \(range.lowerBound)…\(range.upperBound)")
        }
        guard range.contains(int) else {
            throw .badField(name(key), "out of range \(range.lowerBound)…\(range.upperBound)")
        }
        return int
    }

    public func optionalInt(_ key: String, in range: ClosedRange<Int64> = Int64.min...Int64.max)
        throws(GatehouseError) -> Int64?
    {
        guard has(key) else { return nil }
        return try int(key, in: range)
    }

    public func double(_ key: String, in range: ClosedRange<Double>) throws(GatehouseError) -> Double {
        guard let value = value(key) else { throw .badField(name(key), "is required") }
        guard let number = value.numberValue else {
            throw .badField(name(key), "expected a number, got \(value.typeName)")
        }
        guard let double = number.double, range.contains(double) else {
            throw .badField(name(key), "out of range \(range.lowerBound)…\(range.upperBound)")
        }
        return double
    }

    public func optionalDouble(_ key: String, in range: ClosedRange<Double>) throws(GatehouseError) -> Double? {
        guard has(key) else { return nil }
        return try double(key, in: range)
    }

    // MARK: Booleans

    public func bool(_ key: String) throws(GatehouseError) -> Bool {
        guard let value = value(key) else { throw .badField(name(key), "is required") }
        guard let bool = value.boolValue else {
            throw .badField(name(key), "expected a boolean, got \(value.typeName)")
        }
        return bool
    }

    public func optionalBool(_ key: String) throws(GatehouseError) -> Bool? {
        guard has(key) else { return nil }
        return try bool(key)
    }

    // MARK: Containers

    public func object(_ key: String) throws(GatehouseError) -> Fields {
        guard let value = value(key) else { throw .badField(name(key), "is required") }
        guard let object = value.objectValue else {
            throw .badField(name(key), "expected an object, got \(value.typeName)")
        }
        return Fields(object, path: name(key), reads: reads)
    }

    public func optionalObject(_ key: String) throws(GatehouseError) -> Fields? {
        guard has(key) else { return nil }
        return try object(key)
    }

    /// An object field taken whole, as free-form data: a strict reading does not look at its keys.
    public func optionalOpaqueObject(_ key: String) throws(GatehouseError) -> JSONObject? {
        guard let value = value(key) else { return nil }
        guard let object = value.objectValue else {
            throw .badField(name(key), "expected an object, got \(value.typeName)")
        }
        return object
    }

    public func array(_ key: String, maxCount: Int = 10_000) throws(GatehouseError) -> [JSONValue] {
        guard let value = value(key) else { throw .badField(name(key), "is required") }
        guard let array = value.arrayValue else {
            throw .badField(name(key), "expected an array, got \(value.typeName)")
        }
        guard array.count <= maxCount else { throw .badField(name(key), "has more than \(maxCount) items") }
        return array
    }

    public func optionalArray(_ key: String, maxCount: Int = 10_000) throws(GatehouseError) -> [JSONValue]? {
        guard has(key) else { return nil }
        return try array(key, maxCount: maxCount)
    }

    /// The objects of an array field, each with its indexed path (`products[3]`).
    public func objects(_ key: String, maxCount: Int = 10_000) throws(GatehouseError) -> [Fields] {
        try elements(of: array(key, maxCount: maxCount), key: key)
    }

    public func optionalObjects(_ key: String, maxCount: Int = 10_000) throws(GatehouseError) -> [Fields] {
        guard has(key) else { return [] }
        return try objects(key, maxCount: maxCount)
    }

    /// The strings of an array field.
    public func strings(_ key: String, maxCount: Int = 10_000) throws(GatehouseError) -> [String] {
        var result: [String] = []
        for (index, element) in try array(key, maxCount: maxCount).enumerated() {
            guard let string = element.stringValue else {
                throw .badField("\(name(key))[\(index)]", "expected a string, got \(element.typeName)")
            }
            result.append(string)
        }
        return result
    }

    public func optionalStrings(_ key: String, maxCount: Int = 10_000) throws(GatehouseError) -> [String] {
        guard has(key) else { return [] }
        return try strings(key, maxCount: maxCount)
    }

    private func elements(of array: [JSONValue], key: String) throws(GatehouseError) -> [Fields] {
        var result: [Fields] = []
        result.reserveCapacity(array.count)
        for (index, element) in array.enumerated() {
            let elementName = "\(name(key))[\(index)]"
            guard let object = element.objectValue else {
                throw .badField(elementName, "expected an object, got \(element.typeName)")
            }
            result.append(Fields(object, path: elementName, reads: reads))
        }
        return result
    }
}

/// The keys a strict reading asked for, per object it reached, in the order it reached them
/// (so the first unknown key reported is the first in the document's reading order).
private final class KeyReads: Sendable {
    private struct Visit {
        let object: JSONObject
        let path: String
        var asked: Set<String> = []
    }

    private let visits = Mutex<[Visit]>([])

    /// Notes `object`, reached at `path`, and answers its place.
    func visit(_ object: JSONObject, path: String) -> Int {
        visits.withLock { visits in
            visits.append(Visit(object: object, path: path))
            return visits.count - 1
        }
    }

    func ask(_ key: String, at visit: Int) {
        visits.withLock { _ = $0[visit].asked.insert(key) }
    }

    /// The path of the first key no decoder asked for, if any.
    func firstUnknownKey() -> String? {
        visits.withLock { visits in
            for visit in visits {
                if let member = visit.object.members.first(where: { !visit.asked.contains($0.key) }) {
                    return Fields.name(member.key, at: visit.path)
                }
            }
            return nil
        }
    }
}
