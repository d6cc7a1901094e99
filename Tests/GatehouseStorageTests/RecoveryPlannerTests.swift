@testable import GatehouseStorage
import Testing

/// The recovery decision as a table of cases, without files (TigerBeetle's recovery case
/// table): which damage is a torn tail to cut, and which is corruption to refuse.
@Suite struct RecoveryPlanning {
    static let database = DatabaseID(bytes: [UInt8](repeating: 1, count: 16))!
    static let foreign = DatabaseID(bytes: [UInt8](repeating: 2, count: 16))!

    /// A scanned segment: `first` LSN, `records` valid records, how it ends, where its data ends.
    static func segment(
        _ first: LSN, records: LSN = 10, end: ScanEnd = .clean, dataEnd: Int = 10_000,
        policy: DurabilityPolicy = .always, window: UInt64 = 4096, later: Int = 0,
        database: DatabaseID = database, nameLSN: LSN? = nil, header: Bool = true
    ) -> SegmentScan {
        var scan = SegmentScan(file: "/d/wal/" + WALFormat.segmentName(firstLSN: nameLSN ?? first), nameLSN: nameLSN ?? first, fileSize: 65536)
        if header {
            scan.header = SegmentHeader(databaseID: database, salt: 1, firstLSN: first, createdMs: 0, policy: policy, tornWindowBytes: window)
        } else {
            scan.headerProblem = .badChecksum
        }
        scan.nextLSN = first + records
        scan.end = end
        scan.dataEnd = dataEnd
        scan.laterValidFrames = later
        return scan
    }

    enum Expected: Equatable {
        case useAsIs
        case truncate(offset: Int)
        case refuse(StorageError.Code, mentioning: String)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let segments: [SegmentScan]
        let expected: Expected
        var allowTornTail = true
        var expectedDatabase: DatabaseID?

        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "an empty directory", segments: [], expected: .useAsIs),
        Case(name: "one clean segment", segments: [segment(1)], expected: .useAsIs),
        Case(name: "a sealed segment, then a clean one", segments: [segment(1, end: .sealed(nextLSN: 11)), segment(11)], expected: .useAsIs),
        Case(name: "the last segment sealed (crash during rotation)", segments: [segment(1, end: .sealed(nextLSN: 11))], expected: .useAsIs),
        Case(
            name: "torn last frame within one frame's window (always)",
            segments: [segment(1, end: .bad(offset: 9000, reason: "frame body checksum does not match"), dataEnd: 9500)],
            expected: .truncate(offset: 9000)
        ),
        Case(
            name: "torn tail at the very start of the last segment",
            segments: [segment(1, end: .sealed(nextLSN: 11)), segment(11, records: 0, end: .bad(offset: 4096, reason: "no frame marker"), dataEnd: 4200)],
            expected: .truncate(offset: 4096)
        ),
        Case(
            name: "damage reaching past the window (always)",
            segments: [segment(1, end: .bad(offset: 4096, reason: "frame header checksum does not match"), dataEnd: 20_000)],
            expected: .refuse(.corrupt, mentioning: "more than the 4096 bytes")
        ),
        Case(
            name: "valid frames after the hole under always",
            segments: [segment(1, end: .bad(offset: 9000, reason: "frame body checksum does not match"), dataEnd: 9800, later: 1)],
            expected: .refuse(.corrupt, mentioning: "valid frame(s) follow the damage")
        ),
        Case(
            name: "valid frames after the hole under everysec (unsynced pages persist out of order)",
            segments: [segment(1, end: .bad(offset: 9000, reason: "frame body checksum does not match"), dataEnd: 9800, policy: .everysec, window: 1 << 20, later: 2)],
            expected: .truncate(offset: 9000)
        ),
        Case(
            name: "everysec damage beyond its window",
            segments: [segment(1, end: .bad(offset: 4096, reason: "no frame marker"), dataEnd: 60_000, policy: .everysec, window: 20_000)],
            expected: .refuse(.corrupt, mentioning: "everysec")
        ),
        Case(
            name: "policy none: the whole last segment is the window",
            segments: [segment(1, end: .bad(offset: 4096, reason: "no frame marker"), dataEnd: 65_000, policy: .none, window: 0, later: 5)],
            expected: .truncate(offset: 4096)
        ),
        Case(
            name: "strict mode refuses even a torn tail",
            segments: [segment(1, end: .bad(offset: 9000, reason: "frame body checksum does not match"), dataEnd: 9100)],
            expected: .refuse(.tornTail, mentioning: "gatehouse wal repair"),
            allowTornTail: false
        ),
        Case(
            name: "a bad frame in a segment that is not the last",
            segments: [segment(1, end: .bad(offset: 5000, reason: "frame body checksum does not match"), dataEnd: 5100), segment(11)],
            expected: .refuse(.corrupt, mentioning: "not the last")
        ),
        Case(
            name: "a segment without a seal followed by another",
            segments: [segment(1, end: .clean), segment(11)],
            expected: .refuse(.corrupt, mentioning: "without a seal")
        ),
        Case(
            name: "a seal pointing past the next segment (a segment is missing)",
            segments: [segment(1, end: .sealed(nextLSN: 11)), segment(21)],
            expected: .refuse(.corrupt, mentioning: "a segment is missing")
        ),
        Case(
            name: "an unreadable segment header",
            segments: [segment(1, end: .sealed(nextLSN: 11)), segment(11, header: false)],
            expected: .refuse(.corrupt, mentioning: "checksum")
        ),
        Case(
            name: "a name that disagrees with the header",
            segments: [segment(1, nameLSN: 5)],
            expected: .refuse(.corrupt, mentioning: "file name does not match")
        ),
        Case(
            name: "a segment from another database among ours",
            segments: [segment(1, end: .sealed(nextLSN: 11)), segment(11, database: foreign)],
            expected: .refuse(.corrupt, mentioning: "belongs to database")
        ),
        Case(
            name: "a log from another database than the manifest's",
            segments: [segment(1)],
            expected: .refuse(.corrupt, mentioning: "belongs to database"),
            expectedDatabase: foreign
        ),
    ]

    @Test(arguments: cases)
    func planFor(_ testCase: Case) {
        let plan = RecoveryPlanner(expectedDatabaseID: testCase.expectedDatabase, allowTornTail: testCase.allowTornTail).plan(testCase.segments)
        switch (plan, testCase.expected) {
        case (.useAsIs, .useAsIs):
            break
        case (.truncateTail(let file, let offset), .truncate(let expectedOffset)):
            #expect(offset == expectedOffset)
            #expect(file == testCase.segments.last?.file)
        case (.refuse(let error), .refuse(let code, let mentioning)):
            #expect(error.code == code)
            #expect(error.message.contains(mentioning), "\(error.message)")
            if code == .corrupt {
                #expect(error.message.contains("gatehouse wal verify"))
                #expect(error.message.contains("at offset"))
                #expect(error.message.contains("last good record is LSN"))
            }
        default:
            Issue.record("\(testCase.name): planned \(plan), expected \(testCase.expected)")
        }
    }

    @Test func anUnsupportedVersionIsItsOwnRefusal() {
        var scan = Self.segment(1, header: false)
        scan.headerProblem = .unsupportedVersion(9)
        guard case .refuse(let error) = RecoveryPlanner().plan([scan]) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(error.code == .unsupportedVersion)
    }

    @Test func theRefusalNamesTheFileTheOffsetAndTheLastGoodLSN() {
        let segments = [Self.segment(1, records: 7, end: .bad(offset: 5000, reason: "frame body checksum does not match"), dataEnd: 5100), Self.segment(8)]
        guard case .refuse(let error) = RecoveryPlanner().plan(segments) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(error.message.contains("/d/wal/0000000000000001.wal at offset 5000"))
        #expect(error.message.contains("LSN 7"))
        #expect(error.message.contains("gatehouse wal repair"))
    }
}
