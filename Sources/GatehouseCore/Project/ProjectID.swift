/// A project's id: `[a-z0-9][a-z0-9_-]{0,62}` (PROTOCOL.md, `project.create`).
public struct ProjectID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public init(validating text: String) throws(GatehouseError) {
        guard Self.isValid(text) else {
            throw .badField("project", "must match [a-z0-9][a-z0-9_-]{0,62}")
        }
        self.rawValue = text
    }

    public static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        guard (1...63).contains(bytes.count), let first = bytes.first, isLowerAlphanumeric(first) else {
            return false
        }
        return bytes.allSatisfy { isLowerAlphanumeric($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    public var description: String { rawValue }

    public static func < (lhs: ProjectID, rhs: ProjectID) -> Bool { lhs.rawValue < rhs.rawValue }
}
