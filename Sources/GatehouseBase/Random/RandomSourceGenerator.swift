/// Adapts a ``RandomSource`` to the standard library's generator protocol, for
/// `Int.random(in:using:)` and `shuffled(using:)` with an injected source.
public struct RandomSourceGenerator: RandomNumberGenerator {
    public let source: any RandomSource

    public init(_ source: any RandomSource) {
        self.source = source
    }

    public mutating func next() -> UInt64 {
        source.randomUInt64()
    }
}
