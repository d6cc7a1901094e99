import GatehouseWire

/// A request line with holes, compiled once per connection so that writing a request on the
/// hot path is a copy of bytes plus the digits of a counter.
///
/// `{n}` becomes a counter unique across the run (as in `bench/lineload.c`): for idempotency
/// keys, ids and anything else that must not repeat. Any other `{name}` is replaced at compile
/// time by the JSON text of `variables[name]` (a string arrives quoted and escaped), so an op's
/// setup can hand over a profile id without the template worrying about escaping, or by
/// `verbatim[name]` as it is, for text inside a JSON string (the caller vouches that it needs no
/// escaping: the bench project's id, which is lowercase letters, digits and dashes). A `{` not
/// followed by a lowercase name and `}` is ordinary JSON.
///
/// Without `endsWithNewline` it is the body of an HTTP request (``HTTPRequestTemplate``),
/// whose length ``byteCount(counter:)`` tells before it is written.
struct RequestTemplate: LoadRequestWriter {
    private enum Piece: Sendable {
        case literal([UInt8])
        case counter
    }

    private let pieces: [Piece]
    /// The longest line it can write, newline included: a counter takes at most 20 digits.
    let requestBytesMax: Int
    private let literalBytes: Int
    private let counters: Int

    init(_ text: String, variables: [String: JSONValue], verbatim: [String: String] = [:], endsWithNewline: Bool = true)
        throws(BenchFailure)
    {
        var pieces: [Piece] = []
        var literal: [UInt8] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            literal += rest[..<open].utf8
            let afterOpen = rest.index(after: open)
            let name = rest[afterOpen...].prefix { ("a"..."z").contains($0) || $0 == "_" }
            guard !name.isEmpty, name.endIndex < rest.endIndex, rest[name.endIndex] == "}" else {
                literal.append(UInt8(ascii: "{"))
                rest = rest[afterOpen...]
                continue
            }
            rest = rest[rest.index(after: name.endIndex)...]
            if name == "n" {
                pieces.append(.literal(literal))
                literal = []
                pieces.append(.counter)
            } else if let value = variables[String(name)] {
                literal += JSONWriter.serialize(value)
            } else if let text = verbatim[String(name)] {
                literal += text.utf8
            } else {
                throw BenchFailure("request template \(text) names {\(name)}, which its op's setup does not provide")
            }
        }
        literal += rest.utf8
        if endsWithNewline { literal.append(UInt8(ascii: "\n")) }
        pieces.append(.literal(literal))
        let kept = pieces.filter { if case .literal(let bytes) = $0 { !bytes.isEmpty } else { true } }
        self.pieces = kept
        self.literalBytes = kept.reduce(0) { total, piece in
            if case .literal(let bytes) = piece { total + bytes.count } else { total }
        }
        self.counters = kept.count { if case .counter = $0 { true } else { false } }
        self.requestBytesMax = literalBytes + counters * 20
    }

    /// How many bytes ``write(counter:to:)`` writes for `counter`.
    func byteCount(counter: Int) -> Int {
        var digits = 1
        var remaining = UInt64(counter) / 10
        while remaining != 0 {
            digits += 1
            remaining /= 10
        }
        return literalBytes + counters * digits
    }

    /// Writes one request line for `counter` at `destination`, which has room for
    /// ``requestBytesMax``; answers the bytes written.
    @inline(__always)
    func write(counter: Int, to destination: UnsafeMutableRawPointer) -> Int {
        var written = 0
        for piece in pieces {
            switch piece {
            case .literal(let bytes):
                bytes.withUnsafeBytes { (destination + written).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                written += bytes.count
            case .counter:
                written += Self.writeDigits(of: UInt64(counter), to: destination + written)
            }
        }
        return written
    }

    /// The decimal digits of `value`, built backwards in a stack buffer and copied forwards.
    static func writeDigits(of value: UInt64, to destination: UnsafeMutableRawPointer) -> Int {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var remaining = value
            var first = digits.count
            repeat {
                first -= 1
                digits[first] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: remaining % 10)
                remaining /= 10
            } while remaining != 0
            let count = digits.count - first
            destination.copyMemory(from: digits.baseAddress! + first, byteCount: count)
            return count
        }
    }
}
