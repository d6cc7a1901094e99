import GatehouseBase
@testable import GatehouseStorage
import Testing

/// Raw deflate through CZlib: round trips, and inflate never runs past the declared length.
@Suite struct DeflateAndBoundedInflate {
    static let inputs: [[UInt8]] = [
        [],
        [42],
        Array("hello, hello, hello, hello".utf8),
        [UInt8](repeating: 0, count: 100_000),
        SeededRandomSource(seed: 7).randomBytes(count: 70_000),
        (0..<300_000).map { UInt8(truncatingIfNeeded: $0 / 13) },
    ]

    @Test(arguments: inputs.indices)
    func deflateThenInflateGivesTheInputBack(index: Int) throws {
        let input = Self.inputs[index]
        let deflater = Deflater()
        let compressed = deflater.compress(input)
        #expect(try Inflater().decompress(compressed, rawLength: input.count) == input)
        // A reset stream gives the same bytes again: every frame decodes on its own.
        #expect(deflater.compress(input) == compressed)
    }

    @Test func knownAnswerForARawDeflateStream() throws {
        // "hello" as a fixed-Huffman raw deflate block (python: zlib.compressobj(1, 8, -15)).
        let stream: [UInt8] = [0xCB, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]
        #expect(try Inflater().decompress(stream, rawLength: 5) == Array("hello".utf8))
        #expect(Deflater().compress(Array("hello".utf8)) == stream)
    }

    @Test func aBombIsStoppedAtTheDeclaredLength() throws {
        // 32 MiB of zeros deflates to a sliver; declaring 1,000 bytes must not inflate it.
        let bomb = Deflater(level: 9).compress([UInt8](repeating: 0, count: 32 << 20))
        #expect(bomb.count < 64 << 10)
        #expect(throws: Inflater.Failure.self) { try Inflater().decompress(bomb, rawLength: 1000) }
    }

    @Test func aShortOrDamagedStreamIsRefused() throws {
        let input = (0..<5000).map { UInt8(truncatingIfNeeded: $0 % 17) }
        let compressed = Deflater().compress(input)
        let inflater = Inflater()
        #expect(throws: Inflater.Failure.self) { try inflater.decompress(Array(compressed.dropLast(3)), rawLength: input.count) }
        #expect(throws: Inflater.Failure.self) { try inflater.decompress(compressed, rawLength: input.count + 1) }
        #expect(throws: Inflater.Failure.self) { try inflater.decompress(compressed + [1, 2, 3], rawLength: input.count) }
        #expect(throws: Inflater.Failure.self) { try inflater.decompress([0xFF, 0xFF, 0xFF, 0xFF], rawLength: 10) }
        // The inflater still works after failures.
        #expect(try inflater.decompress(compressed, rawLength: input.count) == input)
    }
}
