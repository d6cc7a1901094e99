import Synchronization

/// A deterministic source for tests: the same seed yields the same bytes, in the same order,
/// on every platform. Never use it for anything secret.
///
/// The generator is SplitMix64 (Steele, Lea and Flood, 2014): tiny, with a full 2^64 period
/// and good enough statistics for tests. Its state sits behind a lock, so a shared instance
/// hands every byte out exactly once even when tasks draw concurrently.
public final class SeededRandomSource: RandomSource {
    private let state: Mutex<UInt64>

    public init(seed: UInt64) {
        state = Mutex(seed)
    }

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        state.withLock { state in
            var offset = 0
            while offset < buffer.count {
                // Little-endian bytes of each output word, so results do not depend on the host.
                var word = Self.next(&state).littleEndian
                let take = min(8, buffer.count - offset)
                withUnsafeBytes(of: &word) { wordBytes in
                    for index in 0..<take { buffer[offset + index] = wordBytes[index] }
                }
                offset += take
            }
        }
    }

    private static func next(_ state: inout UInt64) -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
