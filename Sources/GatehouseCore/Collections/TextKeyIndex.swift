/// A hash index from `String` keys kept in a ``TextArena`` to positions in an array its owner
/// keeps: open addressing with linear probing over 8-byte buckets (32 hash bits above, the
/// position + 1 below; 0 is empty). Growing moves buckets by the hash bits they keep, never
/// reading or hashing a key again; a `[String: Value]` rehashes every key with SipHash at each
/// doubling.
///
/// Keys compare as `String`s do (canonical equivalence): a key of ASCII bytes (every key in
/// practice) is hashed over its bytes; any other is hashed as the ASCII key it equals, if one
/// exists, else with `String`'s own hash, and compared as a `String` wherever bytes differ.
struct TextKeyIndex: Sendable {
    /// Empty, or a power of two long.
    private var buckets: [UInt64] = []
    private(set) var count = 0

    init() {}

    /// The position of `key` (whose UTF-8 is `utf8` and hash `hash`), or the empty bucket where
    /// it would go. `keyAt` gives the arena offset of the key at a position.
    func find(_ key: String, _ utf8: UnsafeBufferPointer<UInt8>, hash: UInt32, in text: TextArena, keyAt: (Int) -> Int)
        -> (position: Int?, bucket: Int)
    {
        guard !buckets.isEmpty else { return (nil, 0) }
        let mask = buckets.count - 1
        var bucket = Int(hash) & mask
        while true {
            let entry = buckets[bucket]
            if entry == 0 { return (nil, bucket) }
            if UInt32(truncatingIfNeeded: entry >> 32) == hash {
                let position = Int(UInt32(truncatingIfNeeded: entry)) - 1
                if Self.keyEquals(text, keyAt(position), key, utf8) { return (position, bucket) }
            }
            bucket = (bucket + 1) & mask
        }
    }

    /// Indexes `position` under `hash` in `bucket`, the empty bucket ``find`` answered for its
    /// key (or anywhere, when `bucket` is nil).
    mutating func insert(hash: UInt32, position: Int, at bucket: Int?) {
        precondition(position >= 0 && position < Int(UInt32.max), "position \(position) out of range")
        let entry = UInt64(hash) << 32 | UInt64(position + 1)
        count += 1
        if let bucket, count * 4 <= buckets.count * 3 {
            buckets[bucket] = entry
            return
        }
        if count * 4 > buckets.count * 3 { resize(to: Swift.max(16, buckets.count * 2)) }
        place(entry)
    }

    /// Forgets `position`, indexed under `hash`; the entries after it in its probe run move back
    /// (no tombstones).
    mutating func remove(position: Int, hash: UInt32) {
        let mask = buckets.count - 1
        var hole = Int(hash) & mask
        while buckets[hole] & 0xFFFF_FFFF != UInt64(position + 1) {
            precondition(buckets[hole] != 0, "position \(position) is not indexed")
            hole = (hole + 1) & mask
        }
        var next = (hole + 1) & mask
        while buckets[next] != 0 {
            let home = Int(UInt32(truncatingIfNeeded: buckets[next] >> 32)) & mask
            if (next - home) & mask >= (next - hole) & mask {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = 0
        count -= 1
    }

    /// Every position moves down by `offset` (the owner dropped that many elements, none of them
    /// indexed, from the front of its array).
    mutating func shiftPositions(down offset: Int) {
        let delta = UInt64(offset)
        for bucket in buckets.indices where buckets[bucket] != 0 {
            precondition(buckets[bucket] & 0xFFFF_FFFF > delta, "a dropped position is still indexed")
            buckets[bucket] -= delta
        }
    }

    /// Sized for `count` keys without growing.
    mutating func reserveCapacity(_ count: Int) {
        var size = Swift.max(16, buckets.count)
        while count * 4 > size * 3 { size *= 2 }
        if size > buckets.count { resize(to: size) }
    }

    private mutating func place(_ entry: UInt64) {
        let mask = buckets.count - 1
        var bucket = Int(UInt32(truncatingIfNeeded: entry >> 32)) & mask
        while buckets[bucket] != 0 { bucket = (bucket + 1) & mask }
        buckets[bucket] = entry
    }

    private mutating func resize(to size: Int) {
        let old = buckets
        buckets = [UInt64](repeating: 0, count: size)
        for entry in old where entry != 0 { place(entry) }
    }

    // MARK: Keys

    /// Equal bytes are equal keys; different bytes are different keys unless one is not ASCII,
    /// when `String` decides.
    static func keyEquals(_ text: TextArena, _ offset: Int, _ key: String, _ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        text.withUTF8(at: offset) { stored in
            if memoryEquals(stored, utf8) { return true }
            guard !(isASCII(stored) && isASCII(utf8)) else { return false }
            return String(decoding: stored, as: UTF8.self) == key
        }
    }

    /// Seeded once per process, so no one can choose keys that pile into one probe run.
    private static let seed = UInt64(UInt(bitPattern: Int.random(in: .min ... .max)))

    /// The 32 bits a key is found by: equal keys (as `String`s) hash equal.
    static func hash(_ key: String, _ utf8: UnsafeBufferPointer<UInt8>) -> UInt32 {
        if isASCII(utf8) { return hash(bytes: utf8) }
        if var ascii = asciiEquivalent(of: key) {
            return ascii.withUTF8 { Self.hash(bytes: $0) }
        }
        let hashed = UInt64(UInt(bitPattern: key.hashValue))
        return UInt32(truncatingIfNeeded: hashed ^ (hashed >> 32))
    }

    /// The hash of the key stored at `offset`.
    static func hash(at offset: Int, in text: TextArena) -> UInt32 {
        text.withUTF8(at: offset) { utf8 in
            isASCII(utf8) ? hash(bytes: utf8) : hash(String(decoding: utf8, as: UTF8.self), utf8)
        }
    }

    /// A multiply-and-shift hash over 8 bytes a step, finished with MurmurHash3's mixer: a few
    /// nanoseconds for a key of 20 bytes.
    static func hash(bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var hash = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        var index = 0
        let base = UnsafeRawPointer(bytes.baseAddress)
        while index + 8 <= bytes.count, let base {
            let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            hash = (hash ^ word) &* 0xBF58_476D_1CE4_E5B9
            hash ^= hash >> 29
            index += 8
        }
        if index < bytes.count {
            var word: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.count {
                word |= UInt64(bytes[index]) << shift
                shift += 8
                index += 1
            }
            hash = (hash ^ word) &* 0xBF58_476D_1CE4_E5B9
            hash ^= hash >> 29
        }
        hash ^= hash >> 33
        hash &*= 0xFF51_AFD7_ED55_8CCD
        hash ^= hash >> 33
        hash &*= 0xC4CE_B9FE_1A85_EC53
        hash ^= hash >> 33
        return UInt32(truncatingIfNeeded: hash)
    }

    static func isASCII(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        utf8.allSatisfy { $0 < 0x80 }
    }

    /// The ASCII string `key` equals as a `String`, if any (a few characters, such as the
    /// Kelvin sign, are canonically equivalent to an ASCII one).
    static func asciiEquivalent(of key: String) -> String? {
        var bytes: [UInt8] = []
        for character in key {
            if character.utf8.allSatisfy({ $0 < 0x80 }) {
                bytes.append(contentsOf: character.utf8)
                continue
            }
            guard character.unicodeScalars.count == 1,
                let ascii = (UInt8(0)..<0x80).first(where: { Character(Unicode.Scalar($0)) == character })
            else { return nil }
            bytes.append(ascii)
        }
        let ascii = String(decoding: bytes, as: UTF8.self)
        return ascii == key ? ascii : nil
    }
}
