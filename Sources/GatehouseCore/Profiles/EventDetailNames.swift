import GatehouseBase

/// The feed's in-memory form of packed details (``EventLog`` keeps a million of them): the
/// packed form, but each detail name the rules use is one byte, `0x80` + its place in
/// ``names``, instead of its length and letters (an `INITIAL_PURCHASE`'s seven names are 91 of
/// its about 160 bytes). Any other name stays as packed, after an `0xFF` when its length takes
/// more than one byte. Readers and snapshots get the packed form back, byte for byte.
enum EventDetailNames {
    /// Places are not stored anywhere but in memory: the list may change freely (up to 127).
    static let names: [[UInt8]] = [
        "store", "product_id", "original_transaction_id", "transaction_id", "expires_ms", "period_type", "environment",
        "entitlement", "reason", "merged_from", "transferred_from", "transferred_to", "original_transaction_ids",
        "currency", "amount", "balance", "source", "ref",
    ].map { Array($0.utf8) }

    /// The places of the names of each length: interning compares a name with the one or two
    /// names of its length, not with all of them.
    private static let placesByLength: [[Int]] = {
        var table = [[Int]](repeating: [], count: (names.map(\.count).max() ?? 0) + 1)
        for (place, name) in names.enumerated() { table[name.count].append(place) }
        return table
    }()

    private static let firstPlace: UInt8 = 0x80
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

    /// Runs a walk over bytes this module wrote or checked: failing is a broken invariant.
    private static func checked(_ body: () throws(ByteReaderError) -> Void) {
        do { try body() } catch { preconditionFailure("event details damaged in memory: \(error)") }
    }
}
