/// Where random bytes come from. Production code takes a `RandomSource` instead of calling a
/// generator directly, so domain tests can pass a ``SeededRandomSource`` and get the same
/// tokens and ids on every run.
///
/// Sources are shared across threads and tasks: `fill` must be safe to call concurrently
/// (hence non-mutating, with any state behind a lock).
public protocol RandomSource: Sendable {
    /// Overwrites every byte of `buffer` with random bytes.
    func fill(_ buffer: UnsafeMutableRawBufferPointer)
}
