@testable import GatehouseStorage
import Testing

/// Inflating straight into a caller's buffer (a snapshot chunk's place in the body) keeps the
/// bounds of inflating into an array: the stream must fill the buffer exactly.
@Suite struct InflatingIntoABuffer {
    static let input = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
    static let compressed = Deflater().compress(input)

    private func inflate(_ stream: [UInt8], into count: Int, with inflater: Inflater = Inflater()) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: count)
        try stream.withUnsafeBytes { raw in
            try output.withUnsafeMutableBufferPointer { buffer in try inflater.decompress(raw, into: buffer) }
        }
        return output
    }

    @Test func aStreamFillsABufferOfItsSize() throws {
        #expect(try inflate(Self.compressed, into: Self.input.count) == Self.input)
        #expect(try inflate(Deflater().compress([UInt8]()), into: 0) == [])
    }

    @Test func aBufferTooSmallOrTooLargeIsRefusedAndTheInflaterStillWorks() throws {
        let inflater = Inflater()
        #expect(throws: Inflater.Failure.self) { try inflate(Self.compressed, into: Self.input.count - 1, with: inflater) }
        #expect(throws: Inflater.Failure.self) { try inflate(Self.compressed, into: Self.input.count + 1, with: inflater) }
        #expect(throws: Inflater.Failure.self) { try inflate(Array(Self.compressed.dropLast(2)), into: Self.input.count, with: inflater) }
        #expect(throws: Inflater.Failure.self) { try inflate(Self.compressed + [7], into: Self.input.count, with: inflater) }
        #expect(try inflate(Self.compressed, into: Self.input.count, with: inflater) == Self.input)
    }
}
