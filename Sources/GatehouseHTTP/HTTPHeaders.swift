/// A message's header fields in the order received, names as sent. Lookups ignore the case
/// of the name (RFC 9110 §5.1).
public struct HTTPHeaders: Sendable, Sequence {
    public typealias Element = (name: String, value: String)

    private var fields: [Element]

    public init(_ fields: [Element] = []) {
        self.fields = fields
    }

    /// The first value of `name`.
    public subscript(_ name: String) -> String? {
        fields.first { Self.namesMatch($0.name, name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { Self.namesMatch($0.name, name) }.map(\.value)
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[Element]> {
        fields.makeIterator()
    }

    /// Header names are ASCII tokens, so ASCII case folding is all that is needed.
    static func namesMatch(_ left: String, _ right: String) -> Bool {
        // Lengths first: most names looked for are not the one at hand.
        left.utf8.count == right.utf8.count && left.utf8.elementsEqual(right.utf8) { lowercased($0) == lowercased($1) }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}
