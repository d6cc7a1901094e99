import GatehouseBase
@testable import GatehouseStorage
import GatehouseTesting
import Testing

/// A torn last write is cut off at startup, kept aside in a `.broken-` file, and everything
/// before it replays (storage.md C.8, item 6; Redis aof.tcl's truncation at every offset).
@Suite struct TornTails {
    /// A log of three frames (LSNs 1, 2, 3), closed cleanly; returns the segment's bytes and the
    /// last frame's offset and header.
    static func threeFrameLog(_ policy: DurabilityPolicy = .always, lastRecordSize: Int = 90) async throws -> (bytes: [UInt8], last: ScannedFrame) {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk, testOptions(policy))
        for lsn in LSN(1)...3 {
            _ = try opened.log.append(testRecord(lsn, size: lsn == 3 ? lastRecordSize : nil))
            await opened.log.waitDurable(lsn)
        }
        await opened.log.close()
        let bytes = try #require(disk.contents(of: walDirectory + "/0000000000000001.wal"))
        var frames: [ScannedFrame] = []
        _ = SegmentScanner().scan(file: "x", bytes: bytes, previousBodyCRC: nil) { frame, _ in frames.append(frame) }
        #expect(frames.count == 3)
        return (bytes, frames[2])
    }

    static func disk(with segment: [UInt8]) -> FaultyFileSystem {
        let disk = FaultyFileSystem()
        disk.setContents(segment, of: walDirectory + "/0000000000000001.wal")
        return disk
    }

    @Test func aTornLastFrameIsCutAtEveryByteOffsetAndTheRestReplays() async throws {
        let (original, last) = try await Self.threeFrameLog()
        let start = last.offset
        let end = start + last.header.footprint
        let wholeBody = start + WALFormat.frameHeaderBytes + Int(last.header.bodyLength)
        for garbage in [UInt8(0), 0xFF] {
            for cut in start..<end {
                var torn = original
                for index in cut..<end { torn[index] = garbage }
                let disk = Self.disk(with: torn)
                let opened = try openLog(disk)
                let frameSurvives = cut >= wholeBody
                let nothingWritten = cut == start && garbage == 0
                if frameSurvives {
                    #expect(opened.replayedLSNs == [1, 2, 3], "cut at \(cut)")
                    #expect(opened.report.tornTail == nil)
                } else {
                    #expect(opened.replayedLSNs == [1, 2], "cut at \(cut), garbage \(garbage)")
                    if nothingWritten {
                        #expect(opened.report.tornTail == nil)
                    } else if let tornTail = opened.report.tornTail {
                        #expect(tornTail.offset == start)
                        #expect(tornTail.firstDroppedLSN == 3)
                        let dataEnd = SegmentScanner.dataEnd(torn.withUnsafeBytes { $0 })
                        #expect(tornTail.bytes == dataEnd - start)
                        #expect(disk.contents(of: tornTail.keptAside) == Array(torn[start..<dataEnd]))
                        #expect(tornTail.keptAside.hasPrefix(walDirectory + "/0000000000000001.wal.broken-"))
                    } else {
                        Issue.record("cut at \(cut), garbage \(garbage): no torn tail reported")
                    }
                }
                #expect(try opened.log.append(testRecord(4)) == (frameSurvives ? 4 : 3))
                await opened.log.close()
                // Idempotent: the next start finds nothing more to cut.
                if cut % 13 == 0 {
                    let again = try openLog(disk)
                    #expect(again.report.tornTail == nil)
                    #expect(again.replayed.count == (frameSurvives ? 4 : 3))
                    await again.log.close()
                }
            }
        }
    }

    @Test func aLengthPointingPastTheEndOfTheFileIsATornTail() async throws {
        var (bytes, last) = try await Self.threeFrameLog()
        var header = last.header
        header.bodyLength = 0x7FFF_FFF0
        bytes.replaceSubrange(last.offset..<last.offset + 48, with: header.encoded())
        let opened = try openLog(Self.disk(with: bytes))
        #expect(opened.replayedLSNs == [1, 2])
        #expect(opened.report.tornTail?.reason.contains("runs past the end of the file") == true)
        #expect(opened.report.tornTail?.lastDroppedLSN == 3)
        await opened.log.close()
    }

    @Test func aHoleFollowedByValidFramesIsATornTailUnderEverysec() async throws {
        let (bytes, frames) = try await Self.fourFrames(.everysec)
        var damaged = bytes
        damaged[frames[1].offset + 50] ^= 0x01
        let opened = try openLog(Self.disk(with: damaged), testOptions(.everysec))
        #expect(opened.replayedLSNs == [1])
        #expect(opened.report.tornTail?.offset == frames[1].offset)
        #expect(opened.report.tornTail?.lastDroppedLSN == 4)
        await opened.log.close()
    }

    @Test func aHoleFollowedByValidFramesIsRefusedUnderAlways() async throws {
        let (bytes, frames) = try await Self.fourFrames(.always)
        var damaged = bytes
        damaged[frames[1].offset + 50] ^= 0x01
        #expect {
            _ = try openLog(Self.disk(with: damaged))
        } throws: { error in
            let error = error as? StorageError
            return error?.code == .corrupt && error?.message.contains("0000000000000001.wal at offset \(frames[1].offset)") == true
                && error?.message.contains("valid frame(s) follow") == true
        }
    }

    @Test func strictModeRefusesATornTail() async throws {
        var (bytes, last) = try await Self.threeFrameLog()
        bytes[last.offset + 60] ^= 0x40
        var options = testOptions()
        options.allowTornTail = false
        #expect {
            _ = try openLog(Self.disk(with: bytes), options)
        } throws: { error in
            (error as? StorageError)?.code == .tornTail
        }
    }

    static func fourFrames(_ policy: DurabilityPolicy) async throws -> ([UInt8], [ScannedFrame]) {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk, testOptions(policy))
        for lsn in LSN(1)...4 {
            _ = try opened.log.append(testRecord(lsn, size: 120))
            await opened.log.waitDurable(lsn)
        }
        await opened.log.close()
        let bytes = try #require(disk.contents(of: walDirectory + "/0000000000000001.wal"))
        var frames: [ScannedFrame] = []
        _ = SegmentScanner().scan(file: "x", bytes: bytes, previousBodyCRC: nil) { frame, _ in frames.append(frame) }
        return (bytes, frames)
    }
}

/// Damage that is not a torn write stops startup with a precise diagnosis (storage.md C.8,
/// item 7) instead of silently dropping committed records.
@Suite struct CorruptionRefusal {
    /// A log over three or more segments, closed cleanly.
    static func multiSegmentLog() async throws -> (FaultyFileSystem, LSN) {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        var lsn: LSN = 0
        while opened.log.stats.segments < 3 {
            lsn = try opened.log.append((1...4).map { testRecord(lsn + LSN($0), size: 500) })
            await opened.log.waitDurable(lsn)
        }
        lsn = try opened.log.append((1...4).map { testRecord(lsn + LSN($0), size: 500) })
        await opened.log.close()
        return (disk, lsn)
    }

    func expectRefusal(_ disk: FaultyFileSystem, mentioning parts: [String], code: StorageError.Code = .corrupt, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let opened = try openLog(disk)
            Issue.record("the log opened (replayed \(opened.replayed.count))", sourceLocation: sourceLocation)
        } catch let error as StorageError {
            #expect(error.code == code, sourceLocation: sourceLocation)
            for part in parts {
                #expect(error.message.contains(part), "\(error.message)", sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func aBitFlipInASealedSegmentRefusesToStart() async throws {
        let (disk, _) = try await Self.multiSegmentLog()
        let first = walDirectory + "/" + segmentNames(disk)[0]
        disk.flipBit(path: first, offset: 4096 + 200, bit: 3)
        expectRefusal(disk, mentioning: [first + " at offset 4096", "not the last", "gatehouse wal verify", "last good record is LSN 0"])
    }

    @Test func aBitFlipInAFrameHeaderOfASealedSegmentRefusesToStart() async throws {
        let (disk, _) = try await Self.multiSegmentLog()
        let second = walDirectory + "/" + segmentNames(disk)[1]
        disk.flipBit(path: second, offset: 4096 + 10, bit: 0)
        expectRefusal(disk, mentioning: [second + " at offset 4096", "frame header checksum"])
    }

    @Test func aMissingMiddleSegmentRefusesToStart() async throws {
        let (disk, _) = try await Self.multiSegmentLog()
        try disk.unlink(walDirectory + "/" + segmentNames(disk)[1])
        expectRefusal(disk, mentioning: ["a segment is missing"])
    }

    @Test func aSegmentFromAnotherDatabaseRefusesToStart() async throws {
        let (disk, _) = try await Self.multiSegmentLog()
        let names = segmentNames(disk)
        // Build the same log under another database id and swap its middle segment in.
        var options = testOptions(seed: 99)
        options.databaseID = DatabaseID(bytes: [UInt8](repeating: 0xEE, count: 16))
        let other = FaultyFileSystem()
        let opened = try openLog(other, options)
        var lsn: LSN = 0
        while opened.log.stats.segments < 3 {
            lsn = try opened.log.append((1...4).map { testRecord(lsn + LSN($0), size: 500) })
            await opened.log.waitDurable(lsn)
        }
        await opened.log.close()
        let foreign = try #require(other.contents(of: walDirectory + "/" + names[1]))
        disk.setContents(foreign, of: walDirectory + "/" + names[1])
        expectRefusal(disk, mentioning: ["belongs to database eeeeeeee"])
    }

    @Test func aSegmentOfANewerFormatIsUnsupported() async throws {
        let (disk, _) = try await Self.multiSegmentLog()
        let path = walDirectory + "/" + segmentNames(disk)[0]
        var bytes = try #require(disk.contents(of: path))
        bytes[8] = 2
        bytes.storeLE32(CRC32C.checksum(bytes[0..<60]), at: 60)
        disk.setContents(bytes, of: path)
        expectRefusal(disk, mentioning: ["version 2"], code: .unsupportedVersion)
    }

    @Test func swappedFramesRefuseToStart() async throws {
        let (bytes, frames) = try await TornTails.fourFrames(.always)
        var swapped = bytes
        let a = frames[1], b = frames[2]
        let first = Array(bytes[a.offset..<a.offset + a.header.footprint])
        let second = Array(bytes[b.offset..<b.offset + b.header.footprint])
        swapped.replaceSubrange(a.offset..<b.offset + b.header.footprint, with: second + first)
        expectRefusal(TornTails.disk(with: swapped), mentioning: ["at offset \(a.offset)", "LSN"])
    }
}
