extension Logger {
    public typealias Metadata = [String: MetadataValue]

    /// One metadata value. Integers and booleans keep their kind so the JSON format can write
    /// them as numbers and booleans; anything else becomes a string through interpolation
    /// (`"\(address)"`).
    public enum MetadataValue: Sendable, Hashable, CustomStringConvertible {
        case string(String)
        case integer(Int64)
        case boolean(Bool)

        public var description: String {
            switch self {
            case .string(let value): value
            case .integer(let value): String(value)
            case .boolean(let value): String(value)
            }
        }

        /// An integer of any width; `took_ms`, byte counts and sequence numbers are often
        /// `UInt64` or `Int32` rather than `Int`.
        public init(_ value: some BinaryInteger) {
            if let exact = Int64(exactly: value) {
                self = .integer(exact)
            } else {
                // Only UInt64 values above Int64.max get here; keep their digits exact.
                self = .string(String(value))
            }
        }
    }
}

extension Logger.MetadataValue: ExpressibleByStringLiteral, ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension Logger.MetadataValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) {
        self = .integer(value)
    }
}

extension Logger.MetadataValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) {
        self = .boolean(value)
    }
}
