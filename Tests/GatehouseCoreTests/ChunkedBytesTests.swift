@testable import GatehouseCore
import Testing

/// ``ChunkedBytes``: runs at logical offsets end to end, never split across chunks, and copies
/// that share what a write does not touch.
@Suite struct ChunkedBytesBehaviour {
    /// A run of `length` bytes, each its run's number.
    private static func run(_ number: Int, _ length: Int) -> [UInt8] {
        [UInt8](repeating: UInt8(truncatingIfNeeded: number), count: length)
    }

    @Test func runsLieEndToEndAndReadBackWhole() {
        var bytes = ChunkedBytes()
        var ranges: [Range<Int>] = []
        // 1,000 runs of 100–299 bytes: about three chunks.
        for number in 0..<1000 {
            ranges.append(bytes.appendRun { $0.append(contentsOf: Self.run(number, 100 + number % 200)) })
        }
        #expect(ranges.first?.lowerBound == 0)
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound }, "no gaps between runs")
        #expect(bytes.count == ranges.last?.upperBound)
        #expect(bytes.chunkCount > 1)
        for (number, range) in ranges.enumerated() {
            #expect(Array(bytes.slice(range)) == Self.run(number, range.count))
        }
        var all: [UInt8] = []
        bytes.forEachRun(from: 0) { all.append(contentsOf: $0) }
        #expect(all == (0..<1000).flatMap { Self.run($0, 100 + $0 % 200) })
    }

    @Test func aRunThatWouldCrossAChunkStartsItsOwn() {
        var bytes = ChunkedBytes()
        bytes.appendRun { $0.append(contentsOf: Self.run(1, ChunkedBytes.chunkBytes - 10)) }
        let spilling = bytes.appendRun { $0.append(contentsOf: Self.run(2, 100)) }
        #expect(spilling == (ChunkedBytes.chunkBytes - 10)..<(ChunkedBytes.chunkBytes + 90))
        #expect(bytes.chunkCount == 2)
        #expect(Array(bytes.slice(spilling)) == Self.run(2, 100), "read from one chunk")
        // A run bigger than a chunk is a chunk of its own.
        let big = bytes.appendRun { $0.append(contentsOf: Self.run(3, 3 * ChunkedBytes.chunkBytes)) }
        #expect(Array(bytes.slice(big)) == Self.run(3, 3 * ChunkedBytes.chunkBytes))
        let after = bytes.appendRun { $0.append(contentsOf: Self.run(4, 5)) }
        #expect(after.lowerBound == big.upperBound && Array(bytes.slice(after)) == Self.run(4, 5))
    }

    @Test func aCopySharesTheChunksTheNextRunsDoNotTouch() {
        var live = ChunkedBytes()
        for number in 0..<2000 { live.appendRun { $0.append(contentsOf: Self.run(number, 200)) } }
        let captured = live
        let chunks = live.chunkCount
        live.appendRun { $0.append(contentsOf: Self.run(7, 50)) }
        #expect((0..<(chunks - 1)).allSatisfy { live.sharesChunk($0, with: captured) })
        #expect(captured.count == 2000 * 200, "the copy kept what it had")
        var copied: [UInt8] = []
        captured.forEachRun(from: 0) { copied.append(contentsOf: $0) }
        #expect(copied == (0..<2000).flatMap { Self.run($0, 200) })
    }

    @Test func freeingTheFrontKeepsEveryOffsetAndMovesNothing() {
        var bytes = ChunkedBytes()
        for number in 0..<1000 { bytes.appendRun { $0.append(contentsOf: Self.run(number, 150)) } }
        let before = bytes
        let held = bytes.heldCount
        bytes.freeChunks(before: 600 * 150)
        #expect(bytes.count == 1000 * 150, "offsets stay logical")
        #expect(bytes.heldCount < held && bytes.heldCount >= 400 * 150, "the chunks wholly before the offset are gone")
        #expect(Array(bytes.slice((600 * 150)..<(601 * 150))) == Self.run(600, 150))
        #expect(Array(bytes.slice((999 * 150)..<(1000 * 150))) == Self.run(999, 150))
        var rest: [UInt8] = []
        bytes.forEachRun(from: 600 * 150) { rest.append(contentsOf: $0) }
        #expect(rest == (600..<1000).flatMap { Self.run($0, 150) })
        #expect(before.heldCount == held, "a copy made before is untouched")
        bytes.freeChunks(before: bytes.count)
        #expect(bytes.heldCount == 0 && bytes.chunkCount == 0, "everything forgotten: nothing is held")
        let next = bytes.appendRun { $0.append(contentsOf: Self.run(1, 10)) }
        #expect(next == (1000 * 150)..<(1000 * 150 + 10) && Array(bytes.slice(next)) == Self.run(1, 10))
    }

    @Test func bytesReadBackFromASnapshotAreOneChunkAndTakeMoreRuns() {
        var bytes = ChunkedBytes(Self.run(9, 1000))
        #expect(bytes.count == 1000 && bytes.chunkCount == 1)
        let next = bytes.appendRun { $0.append(contentsOf: Self.run(8, 10)) }
        #expect(next == 1000..<1010)
        #expect(Array(bytes.slice(0..<1000)) == Self.run(9, 1000))
        #expect(Array(bytes.slice(next)) == Self.run(8, 10))
        #expect(ChunkedBytes([]).count == 0)
    }
}
