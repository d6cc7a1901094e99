/// Deterministic bytes shaped like what Gatehouse stores (binary ids and numbers next to short
/// text), so that deflate neither flatters the figures (zeros) nor punishes them (pure noise).
/// The reports print the compression each measurement saw.
struct BenchPayload {
    /// SplitMix64: fast, and the same bytes on every run.
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A log record payload of exactly `bytes`: a 16-byte random id, the counter and a
    /// timestamp as 8 bytes each, a small JSON document naming the counter, then random
    /// lowercase letters (a name, a token).
    mutating func record(counter: Int, bytes: Int = 100) -> [UInt8] {
        var payload: [UInt8] = []
        payload.reserveCapacity(bytes)
        appendRandom(16, to: &payload)
        appendLittleEndian(UInt64(counter), to: &payload)
        appendLittleEndian(1_750_000_000_000 + UInt64(counter) * 37, to: &payload)
        payload += #"{"entitlements":[{"id":"e\#(counter)"}]}"#.utf8
        appendLetters(max(0, bytes - payload.count), to: &payload)
        return Array(payload.prefix(bytes))
    }

    /// `bytes` of snapshot body: 128-byte entries like a profile's (an id, counters, a
    /// timestamp, a customer id, entitlement names, random letters for a token), then cut to
    /// the exact size.
    mutating func snapshotBody(bytes: Int) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(bytes + 128)
        var entry = 0
        while body.count < bytes {
            let start = body.count
            appendRandom(16, to: &body)
            appendLittleEndian(UInt64(entry), to: &body)
            appendLittleEndian(1_750_000_000_000 + UInt64(entry) * 1_009, to: &body)
            appendLittleEndian(next() % 10_000, to: &body)
            body += "customer-\(entry)@example.com|pro|pro_monthly|COINS|".utf8
            appendLetters(max(0, 128 - (body.count - start)), to: &body)
            entry += 1
        }
        body.removeLast(body.count - bytes)
        return body
    }

    private mutating func appendRandom(_ count: Int, to bytes: inout [UInt8]) {
        var left = count
        while left > 0 {
            var word = next()
            for _ in 0..<min(8, left) {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
            left -= 8
        }
    }

    private mutating func appendLetters(_ count: Int, to bytes: inout [UInt8]) {
        for _ in 0..<count {
            bytes.append(UInt8(ascii: "a") + UInt8(truncatingIfNeeded: next() % 26))
        }
    }

    private func appendLittleEndian(_ value: UInt64, to bytes: inout [UInt8]) {
        var word = value
        for _ in 0..<8 {
            bytes.append(UInt8(truncatingIfNeeded: word))
            word >>= 8
        }
    }
}
