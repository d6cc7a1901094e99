import GatehouseBase

/// The feed's form of packed details (``EventLog`` keeps a million of them), in memory and in
/// state version 3 snapshot bodies alike: the packed form, but each detail name the rules use is
/// one byte, `0x80` + its code (its place in ``names``), instead of its length and letters (an
/// `INITIAL_PURCHASE`'s seven names are 91 of its about 160 bytes). Any other name stays as
/// packed, after an `0xFF` when its length takes more than one byte. Readers get the packed form
/// back, byte for byte.
enum EventDetailNames {
    /// The codes are stored (docs/data-format.md, "Events (state version 3)": the detail name
    /// codes), so this one table serves memory and disk and a code never changes meaning: new
    /// names are appended (127 at most), none is ever removed or moved.
    static let names: [[UInt8]] = [
        "store", "product_id", "original_transaction_id", "transaction_id", "expires_ms", "period_type", "environment",
        "entitlement", "reason", "merged_from", "transferred_from", "transferred_to", "original_transaction_ids",
        "currency", "amount", "balance", "source", "ref",
    ].map { Array($0.utf8) }

    /// Names the rules write without spelling them (``HeldDetailsWriter``): each is its place in
    /// ``names`` (a test holds the two together).
    enum Known: UInt8, CaseIterable {
        case store, productID, originalTransactionID, transactionID, expiresMs, periodType, environment, entitlement,
            reason, mergedFrom, transferredFrom, transferredTo, originalTransactionIDs, currency, amount, balance, source, ref

        /// The byte that stands for the name in the held form.
        var code: UInt8 { EventDetailNames.firstPlace + rawValue }
    }

    /// The places of the names of each length: interning compares a name with the one or two
    /// names of its length, not with all of them.
    private static let placesByLength: [[Int]] = {
        var table = [[Int]](repeating: [], count: (names.map(\.count).max() ?? 0) + 1)
        for (place, name) in names.enumerated() { table[name.count].append(place) }
        return table
    }()

    fileprivate static let firstPlace: UInt8 = 0x80
    private static let longName: UInt8 = 0xFF

    /// Appends the in-memory form of `packed` (checked details) to `memory`.
    static func intern(_ packed: [UInt8], into memory: inout [UInt8]) {
        var reader = ByteReader(packed)
        checked { () throws(ByteReaderError) in
            let count = try reader.readCount()
            memory.append(contentsOf: packed[0..<reader.offset])
            for _ in 0..<count {
                let nameStart = reader.offset
                try reader.skipString()
                // A length under 128 is one byte: the letters follow it.
                let isShort = packed[nameStart] < firstPlace
                let letters = packed[nameStart + 1..<reader.offset]
                if isShort, letters.count < placesByLength.count,
                    let place = placesByLength[letters.count].first(where: { names[$0].elementsEqual(letters) })
                {
                    memory.append(firstPlace + UInt8(place))
                } else {
                    if !isShort { memory.append(longName) }
                    memory.append(contentsOf: packed[nameStart..<reader.offset])
                }
                let valueStart = reader.offset
                try EventDetailCoding.skipValue(&reader)
                memory.append(contentsOf: packed[valueStart..<reader.offset])
            }
        }
    }

    /// The packed form of what ``intern(_:into:)`` wrote.
    static func expand(_ memory: ArraySlice<UInt8>) -> [UInt8] {
        var packed: [UInt8] = []
        packed.reserveCapacity(memory.count + 96)
        var reader = ByteReader(memory)
        let base = memory.startIndex
        checked { () throws(ByteReaderError) in
            let count = try reader.readCount()
            packed.append(contentsOf: memory[base..<base + reader.offset])
            for _ in 0..<count {
                let start = reader.offset
                switch try reader.readUInt8() {
                case longName:
                    let nameStart = reader.offset
                    try reader.skipString()
                    packed.append(contentsOf: memory[base + nameStart..<base + reader.offset])
                case let place where place >= firstPlace:
                    let name = names[Int(place - firstPlace)]
                    packed.append(UInt8(name.count))
                    packed.append(contentsOf: name)
                case let length:
                    _ = try reader.readRaw(Int(length))
                    packed.append(contentsOf: memory[base + start..<base + reader.offset])
                }
                let valueStart = reader.offset
                try EventDetailCoding.skipValue(&reader)
                packed.append(contentsOf: memory[base + valueStart..<base + reader.offset])
            }
        }
        return packed
    }

    /// Checks the details of consecutive events in the form ``intern(_:into:)`` writes, from
    /// bytes that come from disk: one event's from `start` up to each of `ends` (increasing).
    /// A name code past the table, a name or string that is not UTF-8, a value of an unknown
    /// kind, or details that do not end exactly at their end are damage. Walks the bytes in
    /// place (a million events' details in one pass, nothing copied or counted).
    static func check(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, ends: some Sequence<Int>) throws(ByteReaderError) {
        var walk = HeldWalk(bytes: bytes, at: start)
        for end in ends {
            guard end <= bytes.count else { throw ByteReaderError.truncated(at: bytes.count) }
            let count = try walk.count()
            for _ in 0..<count {
                let nameStart = walk.at
                switch try walk.byte() {
                case longName: try walk.string()
                case let place where place >= firstPlace:
                    guard Int(place - firstPlace) < names.count else { throw ByteReaderError.invalid("event detail name code", at: nameStart) }
                case let length: try walk.text(Int(length))
                }
                try walk.value()
            }
            guard walk.at == end else { throw ByteReaderError.invalid("event details ending at \(walk.at), not \(end)", at: end) }
        }
    }

    /// Runs a walk over bytes this module wrote or checked: failing is a broken invariant.
    private static func checked(_ body: () throws(ByteReaderError) -> Void) {
        do { try body() } catch { preconditionFailure("event details damaged in memory: \(error)") }
    }
}

/// A walk over held details in place, for ``EventDetailNames/check(_:from:ends:)``: the checks of
/// ``ByteReader`` and ``EventDetailCoding/skipValue(_:)``, without a reader's copy of the array.
private struct HeldWalk {
    let bytes: UnsafeBufferPointer<UInt8>
    var at: Int

    mutating func byte() throws(ByteReaderError) -> UInt8 {
        guard at < bytes.count else { throw ByteReaderError.truncated(at: at) }
        defer { at += 1 }
        return bytes[at]
    }

    /// As ``ByteReader/readVarUInt()``: at most ten bytes, no bits past 64.
    mutating func varint() throws(ByteReaderError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let start = at
            let byte = try byte()
            guard shift < 64, shift < 63 || byte <= 1 else { throw ByteReaderError.invalid("varint", at: start) }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// A count or length no larger than the bytes left.
    mutating func count() throws(ByteReaderError) -> Int {
        let start = at
        let raw = try varint()
        guard raw <= UInt64(bytes.count - at) else { throw ByteReaderError.truncated(at: start) }
        return Int(raw)
    }

    mutating func skip(_ count: Int) throws(ByteReaderError) {
        guard count <= bytes.count - at else { throw ByteReaderError.truncated(at: at) }
        at += count
    }

    /// `count` bytes of UTF-8.
    mutating func text(_ count: Int) throws(ByteReaderError) {
        let start = at
        try skip(count)
        let text = UnsafeBufferPointer(rebasing: bytes[start..<at])
        var combined: UInt8 = 0
        for byte in text { combined |= byte }
        guard combined < 0x80 || String(validating: text, as: UTF8.self) != nil else {
            throw ByteReaderError.invalid("UTF-8 string", at: start)
        }
    }

    mutating func string() throws(ByteReaderError) {
        try text(try count())
    }

    /// A kind byte and its value (``EventDetailCoding/DetailKind``).
    mutating func value() throws(ByteReaderError) {
        let start = at
        switch EventDetailCoding.DetailKind(rawValue: try byte()) {
        case .string: try string()
        case .int: _ = try varint()
        case .profiles:
            let ids = try count()
            guard ids <= (bytes.count - at) / 19 else { throw ByteReaderError.truncated(at: at) }
            at += ids * 19
        case .strings:
            for _ in 0..<(try count()) { try string() }
        case .bool:
            let boolStart = at
            guard try byte() <= 1 else { throw ByteReaderError.invalid("boolean", at: boolStart) }
        case nil: throw ByteReaderError.invalid("event detail", at: start)
        }
    }
}
