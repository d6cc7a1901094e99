@testable import GatehouseCore
import Testing

/// ``ChunkedArray``: an array's behaviour, with copies that share every chunk a write does not
/// touch (what a snapshot's capture of the state relies on).
@Suite struct ChunkedArrayBehaviour {
    /// An element of 32 bytes: 2,048 to a chunk of 64 KiB.
    struct Wide: Equatable {
        var number: Int
        var rest: (Int, Int, Int) = (0, 0, 0)
        static func == (left: Wide, right: Wide) -> Bool { left.number == right.number }
    }

    @Test func chunksHoldAboutSixtyFourKibibytesOfElements() {
        #expect(ChunkedArray<Wide>.chunkShift == 11)
        #expect(ChunkedArray<UInt8>.chunkShift == 16)
        #expect(ChunkedArray<(Int, Int, Int, Int, Int, Int, Int, Int, Int)>.chunkShift == 9, "72 bytes: 910 fit, 512 is the power of two")
    }

    @Test func appendsReadBackInOrderAcrossChunks() {
        var array = ChunkedArray<Int>()
        let count = 3 * (1 << ChunkedArray<Int>.chunkShift) + 5
        for number in 0..<count { array.append(number * 3) }
        #expect(array.count == count)
        #expect(array.chunkCount == 4)
        #expect(Array(array) == (0..<count).map { $0 * 3 })
        #expect(array.last == (count - 1) * 3)
        #expect(array[(1 << ChunkedArray<Int>.chunkShift)] == (1 << ChunkedArray<Int>.chunkShift) * 3, "the first of the second chunk")
    }

    @Test func writesInPlaceChangeOneElement() {
        var array = ChunkedArray<Wide>()
        for number in 0..<5000 { array.append(Wide(number: number)) }
        array[4097].number = -1
        array[3] = Wide(number: -2)
        #expect(array.map(\.number) == (0..<5000).map { $0 == 4097 ? -1 : $0 == 3 ? -2 : $0 })
    }

    @Test func aCopySharesEveryChunkAWriteDoesNotTouch() {
        var live = ChunkedArray<Wide>()
        for number in 0..<10_000 { live.append(Wide(number: number)) }
        let captured = live
        live.append(Wide(number: 10_000))
        live[100].number = -1
        // 10,001 elements in chunks of 2,048: chunk 0 was written, chunk 4 appended to.
        #expect(live.chunkCount == 5)
        #expect(!live.sharesChunk(0, with: captured))
        #expect((1...3).allSatisfy { live.sharesChunk($0, with: captured) }, "untouched chunks are shared, not copied")
        #expect(!live.sharesChunk(4, with: captured))
        // And the copy is a value: it kept what it had.
        #expect(captured.count == 10_000)
        #expect(captured[100].number == 100)
        #expect(captured.map(\.number) == Array(0..<10_000))
        #expect(live[100].number == -1 && live.last?.number == 10_000)
    }

    @Test func aRepeatedElementFillsWholeChunksThenAPart() {
        let size = 1 << ChunkedArray<UInt64>.chunkShift
        var table = ChunkedArray<UInt64>(repeating: 7, count: 2 * size + 3)
        #expect(table.count == 2 * size + 3 && table.chunkCount == 3)
        #expect(table.allSatisfy { $0 == 7 })
        table[size] = 1
        #expect(table.filter { $0 == 1 }.count == 1)
        #expect(ChunkedArray<UInt64>(repeating: 0, count: 0).isEmpty)
    }

    @Test func freeingTheFrontMovesNothingAndKeepsEveryPosition() {
        let size = 1 << ChunkedArray<Int>.chunkShift
        var array = ChunkedArray<Int>()
        for number in 0..<(5 * size + 7) { array.append(number) }
        let before = array
        let addresses = array.chunkAddresses
        array.freeChunks(before: 2 * size + 3)
        #expect(array.count == 5 * size + 7, "positions stay where they were")
        #expect(((2 * size)..<array.count).allSatisfy { array[$0] == $0 }, "the chunk holding the position is kept whole")
        #expect(array.chunkAddresses[2...] == addresses[2...], "nothing after the freed chunks moved")
        #expect(array.chunkAddresses[..<2].allSatisfy { $0 != addresses[0] && $0 != addresses[1] })
        #expect(Array(before) == Array(0..<(5 * size + 7)), "a copy made before is untouched")
        #expect(array.dropFreedChunks() == 0, "two freed of six: not yet half")
        array.freeChunks(before: 3 * size)
        let dropped = array.dropFreedChunks()
        #expect(dropped == 3 * size, "three of six are half: their slots go, positions move down by three chunks")
        #expect(array.count == 2 * size + 7 && Array(array) == Array((3 * size)..<(5 * size + 7)))
        #expect(array.chunkAddresses == Array(addresses[3...]), "the kept chunks are the same buffers")
        array.freeChunks(before: array.count)
        #expect(array.dropFreedChunks() == 2 * size, "the last chunk holds 7 kept: only the two whole ones are freed")
        #expect(Array(array) == Array((5 * size)..<(5 * size + 7)))
        array.append(-1)
        #expect(array.last == -1 && array.count == 8)
    }

    @Test func removeLastTakesTheLastElementAndEmptiesChunksAsItGoes() {
        let size = 1 << ChunkedArray<Int>.chunkShift
        var array = ChunkedArray(0..<(size + 2))
        let captured = array
        #expect(array.removeLast() == size + 1)
        #expect(array.removeLast() == size)
        #expect(array.count == size && array.chunkCount == 1, "the emptied chunk goes")
        #expect(array.removeLast() == size - 1)
        array.append(-1)
        #expect(array.last == -1 && array.count == size)
        #expect(Array(captured) == Array(0..<(size + 2)), "a copy made before is untouched")
    }

    @Test func aSequenceFillsChunksInOrder() {
        let array = ChunkedArray(stride(from: 0, to: 30_000, by: 3))
        #expect(Array(array) == Array(stride(from: 0, to: 30_000, by: 3)))
    }

    @Test func anArrayIsCopiedAChunkAtATime() {
        let size = 1 << ChunkedArray<Int>.chunkShift
        for count in [0, 1, size - 1, size, size + 1, 3 * size + 7] {
            var array = ChunkedArray(Array(0..<count))
            #expect(Array(array) == Array(0..<count))
            #expect(array.chunkCount == (count + size - 1) / size)
            array.append(count)
            #expect(array.count == count + 1 && array.last == count, "appends go on where the copy ended")
        }
    }

    @Test func slicesAndEqualityWorkAsForAnArray() {
        var left = ChunkedArray<Int>()
        var right = ChunkedArray<Int>()
        for number in 0..<3000 {
            left.append(number)
            right.append(number)
        }
        #expect(left == right)
        right[2999] = 0
        #expect(left != right)
        #expect(Array(left[1000...1002]) == [1000, 1001, 1002])
        left.removeAll()
        #expect(left.isEmpty && left.chunkCount == 0)
    }
}
