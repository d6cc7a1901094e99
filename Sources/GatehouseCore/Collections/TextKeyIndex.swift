/// A hash index from `String` keys kept in a ``TextArena`` to positions in an array its owner
/// keeps, over ``PositionBuckets``: growing never reads or hashes a key again, where a
/// `[String: Value]` rehashes every key with SipHash at each doubling.
///
/// Keys compare as `String`s do (canonical equivalence): a key of ASCII bytes (every key in
/// practice) is hashed over its bytes; any other is hashed as the ASCII key it equals, if one
/// exists, else with `String`'s own hash, and compared as a `String` wherever bytes differ.
struct TextKeyIndex: Sendable {
    private var buckets = PositionBuckets()

    var count: Int { buckets.count }

    init() {}

    /// The position of `key` (whose UTF-8 is `utf8` and hash `hash`), or the empty bucket where
    /// it would go. `keyAt` gives the arena offset of the key at a position.
    func find(_ key: String, _ utf8: UnsafeBufferPointer<UInt8>, hash: UInt32, in text: TextArena, keyAt: (Int) -> Int)
        -> (position: Int?, bucket: Int)
    {
        buckets.find(hash: hash) { Self.keyEquals(text, keyAt($0), key, utf8) }
    }

    /// Asks for the bucket a lookup of a key with `hash` reads first (``Prefetch``).
    func prefetch(hash: UInt32) {
        buckets.prefetch(hash: hash)
    }

    /// Indexes `position` under `hash` in `bucket`, the empty bucket ``find`` answered for its
    /// key (or anywhere, when `bucket` is nil).
    mutating func insert(hash: UInt32, position: Int, at bucket: Int?) {
        buckets.insert(hash: hash, position: position, at: bucket)
    }

    /// Forgets `position`, indexed under `hash`.
    mutating func remove(position: Int, hash: UInt32) {
        buckets.remove(position: position, hash: hash)
    }

    /// Every position moves down by `offset` (the owner dropped that many elements, none of them
    /// indexed, from the front of its array).
    mutating func shiftPositions(down offset: Int) {
        buckets.shiftPositions(down: offset)
    }

    /// Sized for `count` keys without growing.
    mutating func reserveCapacity(_ count: Int) {
        buckets.reserveCapacity(count)
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
