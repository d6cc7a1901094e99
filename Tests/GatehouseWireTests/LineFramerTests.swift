import GatehouseWire
import Testing

/// Everything `next()` hands out until it asks for more data or gives up.
private func drain(_ framer: inout LineFramer) -> (lines: [String], last: LineFramer.Next) {
    var lines: [String] = []
    while true {
        let next = framer.next()
        guard case .line(let range) = next else { return (lines, next) }
        lines.append(framer.withLine(range) { String(decoding: $0, as: UTF8.self) })
    }
}

/// Feeds `input` through `withUnsafeWritableTail`, the way the connection's read loop does.
private func read(_ input: ArraySlice<UInt8>, into framer: inout LineFramer) {
    var remaining = input
    while !remaining.isEmpty {
        let written = framer.withUnsafeWritableTail(minimumCapacity: 1) { tail in
            let count = min(tail.count, remaining.count)
            tail.copyBytes(from: remaining.prefix(count))
            return count
        }
        remaining = remaining.dropFirst(written)
    }
}

@Suite struct FramerSplitsLinesWhereverReadsEnd {
    static let input = Array("{\"a\":1}\n\r\n  \t\n{\"b\":\"é😀\"}\r\nthird\n\nlast line\r\n".utf8)
    static let expected = [#"{"a":1}"#, #"{"b":"é😀"}"#, "third", "last line"]

    @Test func everySplitPositionGivesTheSameLines() {
        for split in 0...Self.input.count {
            var framer = LineFramer(maxLineBytes: 64)
            framer.append(Array(Self.input[..<split]))
            var lines = drain(&framer).lines
            framer.append(Array(Self.input[split...]))
            let rest = drain(&framer)
            lines += rest.lines
            #expect(lines == Self.expected, "split at \(split)")
            #expect(rest.last == .needMoreData)
            #expect(framer.bufferedByteCount == 0)
        }
    }

    @Test func oneByteAtATime() {
        var framer = LineFramer(maxLineBytes: 64)
        var lines: [String] = []
        for byte in Self.input {
            framer.append([byte])
            lines += drain(&framer).lines
        }
        #expect(lines == Self.expected)
    }

    @Test func writableTailSplitsTheSame() {
        for split in 0...Self.input.count {
            var framer = LineFramer(maxLineBytes: 64)
            read(Self.input[..<split], into: &framer)
            var lines = drain(&framer).lines
            read(Self.input[split...], into: &framer)
            lines += drain(&framer).lines
            #expect(lines == Self.expected, "split at \(split)")
        }
    }

    @Test func anIncompleteLineWaits() {
        var framer = LineFramer(maxLineBytes: 64)
        framer.append(Array("{\"a\":".utf8))
        #expect(framer.next() == .needMoreData)
        #expect(framer.bufferedByteCount == 5)
    }
}

@Suite struct FramerStripsLineTerminators {
    @Test func crlfAndLfBothEndALine() {
        var framer = LineFramer(maxLineBytes: 64)
        framer.append(Array("a\r\nb\nc\r\r\n".utf8))
        // Only one "\r" before the "\n" belongs to the terminator.
        #expect(drain(&framer).lines == ["a", "b", "c\r"])
    }

    @Test func aLoneCarriageReturnIsNotATerminator() {
        var framer = LineFramer(maxLineBytes: 64)
        framer.append(Array("a\rb\n".utf8))
        #expect(drain(&framer).lines == ["a\rb"])
    }
}

@Suite struct FramerSkipsBlankLines {
    @Test func blankAndWhitespaceOnlyLinesNeverComeOut() {
        var framer = LineFramer(maxLineBytes: 64)
        framer.append(Array("\n\r\n \n\t\n \t\r \r\n{}\n   \n".utf8))
        let result = drain(&framer)
        #expect(result.lines == ["{}"])
        #expect(result.last == .needMoreData)
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func innerWhitespaceIsKept() {
        var framer = LineFramer(maxLineBytes: 64)
        framer.append(Array("  {} \n".utf8))
        #expect(drain(&framer).lines == ["  {} "])
    }
}

@Suite struct FramerEnforcesTheLineLimit {
    static let limit = 16

    @Test func aLineOfExactlyTheLimitIsAccepted() {
        var framer = LineFramer(maxLineBytes: Self.limit)
        framer.append([UInt8](repeating: UInt8(ascii: "x"), count: Self.limit))
        #expect(framer.next() == .needMoreData)
        framer.append([UInt8(ascii: "\n")])
        #expect(drain(&framer).lines == [String(repeating: "x", count: Self.limit)])
    }

    @Test func oneByteMoreIsRejectedWhenTheNewlineArrives() {
        var framer = LineFramer(maxLineBytes: Self.limit)
        framer.append(Array("ok\n".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: Self.limit + 1) + [0x0A])
        let result = drain(&framer)
        #expect(result.lines == ["ok"])
        #expect(result.last == .lineTooLong)
    }

    @Test func oneByteMoreIsRejectedWithoutANewline() {
        var framer = LineFramer(maxLineBytes: Self.limit)
        framer.append([UInt8](repeating: UInt8(ascii: "x"), count: Self.limit))
        #expect(framer.next() == .needMoreData)
        framer.append([UInt8(ascii: "x")])
        #expect(framer.next() == .lineTooLong)
    }

    @Test func theCarriageReturnCountsTowardTheLimit() {
        var framer = LineFramer(maxLineBytes: Self.limit)
        let line = [UInt8](repeating: UInt8(ascii: "x"), count: Self.limit)
        framer.append(line + Array("\r\n".utf8))
        #expect(framer.next() == .lineTooLong)

        var fits = LineFramer(maxLineBytes: Self.limit)
        fits.append(line.dropLast() + Array("\r\n".utf8))
        #expect(drain(&fits).lines == [String(repeating: "x", count: Self.limit - 1)])
    }

    @Test func aPeerThatNeverSendsANewlineIsCaughtEarly() {
        var framer = LineFramer(maxLineBytes: 1024)
        var results: [LineFramer.Next] = []
        for _ in 0..<100 {
            framer.append([UInt8](repeating: UInt8(ascii: "y"), count: 100))
            results.append(framer.next())
        }
        // 11 chunks are 1,100 bytes: the 11th append is the first one past the limit.
        #expect(results.firstIndex(of: .lineTooLong) == 10)
    }

    @Test func tooLongIsSticky() {
        var framer = LineFramer(maxLineBytes: Self.limit)
        framer.append([UInt8](repeating: UInt8(ascii: "x"), count: Self.limit + 1))
        #expect(framer.next() == .lineTooLong)
        framer.append(Array("\n{}\n{}\n".utf8))
        read(Array("{}\n".utf8)[...], into: &framer)
        #expect(framer.next() == .lineTooLong)
        #expect(framer.next() == .lineTooLong)
    }
}

@Suite struct FramerKeepsOrderAcrossManyLines {
    @Test func thousandLinesInOneAppendComeOutInOrder() {
        let lines = (0..<1000).map { #"{"id":\#($0)}"# }
        var framer = LineFramer(maxLineBytes: 64)
        framer.append(Array((lines.joined(separator: "\n") + "\n").utf8))
        let result = drain(&framer)
        #expect(result.lines == lines)
        #expect(result.last == .needMoreData)
    }

    @Test func compactionKeepsDataCorrectAcrossManyAppends() {
        // Lines of varying length fed in odd-sized chunks force the arena to fill, compact and
        // grow many times while a partial line sits at its end.
        let lines = (0..<5000).map { String(repeating: "abcdefghij", count: $0 % 37) + "#\($0)" }
        let input = Array(lines.joined(separator: "\n").utf8) + [0x0A]
        var framer = LineFramer(maxLineBytes: 512)
        var received: [String] = []
        var offset = 0
        var chunk = 1
        while offset < input.count {
            let end = min(input.count, offset + chunk)
            if chunk.isMultiple(of: 2) {
                framer.append(Array(input[offset..<end]))
            } else {
                read(input[offset..<end], into: &framer)
            }
            received += drain(&framer).lines
            offset = end
            chunk = chunk % 997 + 13
        }
        #expect(received == lines)
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func writableTailKeepsOnlyWhatBodyReports() {
        var framer = LineFramer(maxLineBytes: 64)
        let kept = framer.withUnsafeWritableTail(minimumCapacity: 8) { tail in
            #expect(tail.count >= 8)
            tail.copyBytes(from: Array("ab\ncd\n".utf8))
            return 3
        }
        #expect(kept == 3)
        let nothing = framer.withUnsafeWritableTail(minimumCapacity: 8) { tail in
            tail.copyBytes(from: Array("zz\n".utf8))
            return -1
        }
        #expect(nothing == -1)
        #expect(drain(&framer).lines == ["ab"])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func lineRangesIndexIntoBuffer() {
        var framer = LineFramer(maxLineBytes: 64)
        framer.append(Array("one\ntwo\n".utf8))
        guard case .line(let first) = framer.next() else { Issue.record("expected a line"); return }
        #expect(Array(framer.buffer[first]) == Array("one".utf8))
    }
}
