import GatehouseCore
import GatehouseWire
import Testing

/// ``SyncScan`` reads `sync` with a cursor in every shape the protocol allows, reads from it
/// what the general road reads, and answers "nothing changed" byte for byte as the general
/// writer does; every line the general road refuses, or answers otherwise, it leaves alone.
@Suite struct SyncScans {
    static let profile = ProfileID(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210, tag: 0x00AB_CDEF).description

    static func scan(_ line: [UInt8]) -> SyncScan? {
        line.withUnsafeBytes { SyncScan.scan($0) }
    }

    /// The scanner's "nothing changed" for `line`, or `nil` when it does not read the line.
    static func answer(_ line: [UInt8]) -> String? {
        line.withUnsafeBytes { raw in
            SyncScan.scan(raw).map { String(decoding: $0.nothingChanged(in: raw), as: UTF8.self) }
        }
    }

    static func answer(_ line: String) -> String? { answer(Array(line.utf8)) }

    /// Holds the scanner to the general road for `line`: both read it alike, or both leave it.
    static func expectBothRoadsAgree(_ line: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let general = GeneralRoad.sync(line)
        let scan = Self.scan(line)
        let shown = String(decoding: line, as: UTF8.self)
        #expect(scan?.profileID == general?.profileID, "\(shown)", sourceLocation: sourceLocation)
        #expect(scan?.cursor == general?.cursor, "\(shown)", sourceLocation: sourceLocation)
        #expect(answer(line) == general?.answer, "\(shown)", sourceLocation: sourceLocation)
    }

    @Test func readsALineWithoutAnID() throws {
        let line = #"{"op":"sync","profile_id":"\#(Self.profile)","cursor":7}"#
        let scan = try #require(Self.scan(Array(line.utf8)))
        #expect(scan.profileID.description == Self.profile)
        #expect(scan.cursor == 7)
        #expect(Self.answer(line) == #"{"id":null,"ok":true,"cursor":7,"changed":[]}"# + "\n")
        #expect(Self.answer(line) == GeneralRoad.sync(Array(line.utf8))?.answer)
    }

    @Test func aNullIDIsNoID() {
        let line = #"{"id":null,"op":"sync","profile_id":"\#(Self.profile)","cursor":7}"#
        #expect(Self.answer(line) == #"{"id":null,"ok":true,"cursor":7,"changed":[]}"# + "\n")
    }

    @Test(arguments: RequestShapes.ids)
    func anIDOfEveryFormIsEchoedAsTheGeneralWriterEchoesIt(_ id: String) throws {
        let line = #"{"id":\#(id),"op":"sync","profile_id":"\#(Self.profile)","cursor":3}"#
        #expect(Self.scan(Array(line.utf8)) != nil, "\(line)")
        Self.expectBothRoadsAgree(Array(line.utf8))
    }

    @Test func aStringIDWithEscapesIsWrittenAnewAsTheWriterWritesIt() {
        let line = #"{"id":"\u00e9\/\"","op":"sync","profile_id":"\#(Self.profile)","cursor":3}"#
        #expect(Self.answer(line) == #"{"id":"é/\"","ok":true,"cursor":3,"changed":[]}"# + "\n")
    }

    @Test(arguments: ["7", "7.0", "0.7e1", "70E-1", "7e+0", "7.000"])
    func aCursorInAnyFormOfAnIntegerIsThatInteger(_ cursor: String) throws {
        let line = #"{"id":1,"op":"sync","profile_id":"\#(Self.profile)","cursor":\#(cursor)}"#
        #expect(try #require(Self.scan(Array(line.utf8))).cursor == 7)
        #expect(Self.answer(line) == #"{"id":1,"ok":true,"cursor":7,"changed":[]}"# + "\n")
    }

    @Test func membersInAnyOrderWithAnyJSONWhitespace() throws {
        let line = " \t{\r\"cursor\" :\t5 ,\n\"profile_id\": \"\(Self.profile)\"\r\n, \"op\" : \"sync\" , \"id\" :\"x\" }\r "
        #expect(Self.answer(line) == #"{"id":"x","ok":true,"cursor":5,"changed":[]}"# + "\n")
    }

    @Test(arguments: RequestShapes.extras.map { "\"\($0.name)\":\($0.value)" } + [#""op\u0041":1"#, #""":"""#])
    func membersItDoesNotKnowAreSkippedWhateverTheirValue(_ member: String) throws {
        let line = #"{"id":2,\#(member),"op":"sync",\#(member),"profile_id":"\#(Self.profile)","cursor":5,\#(member)}"#
        #expect(Self.answer(line) == #"{"id":2,"ok":true,"cursor":5,"changed":[]}"# + "\n", "\(line)")
        Self.expectBothRoadsAgree(Array(line.utf8))
    }

    @Test func escapesInTheMembersItReadsAreDecoded() throws {
        let escapedProfile = #"\u0067h_"# + Self.profile.dropFirst(3)
        let line = #"{"\u0069d":1,"o\u0070":"sy\u006ec","profile\u005fid":"\#(escapedProfile)","curs\u006fr":4}"#
        let scan = try #require(Self.scan(Array(line.utf8)))
        #expect(scan.profileID.description == Self.profile)
        #expect(Self.answer(line) == #"{"id":1,"ok":true,"cursor":4,"changed":[]}"# + "\n")
    }

    @Test func aRepeatedMemberCountsWithItsLastValue() throws {
        let other = ProfileID(high: 1, low: 2, tag: 3).description
        let line = #"{"id":1,"op":"sync","profile_id":"\#(other)","cursor":9,"id":"two","profile_id":"\#(Self.profile)","cursor":4}"#
        let scan = try #require(Self.scan(Array(line.utf8)))
        #expect(scan.profileID.description == Self.profile)
        #expect(Self.answer(line) == #"{"id":"two","ok":true,"cursor":4,"changed":[]}"# + "\n")
        Self.expectBothRoadsAgree(Array(line.utf8))
    }

    @Test(arguments: [
        #"{"id":1,"op":"sync","profile_id":"P"}"#,
        #"{"id":1,"op":"sync","profile_id":"P","cursor":null}"#,
        #"{"id":1,"op":"sync","profile_id":"P","cursor":3,"cursor":null}"#,
    ])
    func aSyncWithoutACursorIsAFirstSyncForTheActor(_ line: String) {
        // The general road answers the whole document from the actor: never "nothing changed".
        let line = naming(Self.profile, in: line)
        #expect(Self.scan(line) == nil)
        #expect(GeneralRoad.sync(line) == nil)
    }

    @Test(arguments: [
        // Not one JSON object.
        #"{"op":"sync","profile_id":"P","cursor":1} x"#, #"{"op":"sync","profile_id":"P","cursor":1"#,
        #"{"op":"sync","profile_id":"P","cursor":1,}"#, #"{"op":"sync","profile_id":"P",,"cursor":1}"#,
        #"{"op":"sync" "profile_id":"P","cursor":1}"#, #"["op","sync"]"#, #"{}"#, #"{"op":"sync","profile_id":"P","cursor":1}}"#,
        // Numbers JSON does not have, or integers `sync` does not take.
        #"{"op":"sync","profile_id":"P","cursor":01}"#, #"{"op":"sync","profile_id":"P","cursor":1.}"#,
        #"{"op":"sync","profile_id":"P","cursor":+1}"#, #"{"op":"sync","profile_id":"P","cursor":-1}"#,
        #"{"op":"sync","profile_id":"P","cursor":1.5}"#, #"{"op":"sync","profile_id":"P","cursor":1e400}"#,
        #"{"op":"sync","profile_id":"P","cursor":9223372036854775808}"#, #"{"op":"sync","profile_id":"P","cursor":"1"}"#,
        #"{"op":"sync","profile_id":"P","cursor":-}"#, #"{"op":"sync","profile_id":"P","cursor":true}"#,
        // Strings JSON does not have, in members it reads or skips.
        "{\"op\":\"sync\",\"profile_id\":\"P\",\"cursor\":1,\"x\":\"a\u{01}b\"}",
        #"{"op":"sync","profile_id":"P","cursor":1,"x":"\ud800"}"#, #"{"op":"sync","profile_id":"P","cursor":1,"x":"\q"}"#,
        #"{"op":"sync","profile_id":"P","cursor":1,"x":"\u12"}"#, #"{"op":"sync","profile_id":"P","cursor":1,"x":[1,]}"#,
        #"{"op":"sync","profile_id":"P","cursor":1,"x":{"a"}}"#, #"{"op":"sync","profile_id":"P","cursor":1,"x":nul}"#,
        #"{"op":"sync","profile_id":"P","cursor":1,"x":tru}"#, #"{"op":"sync","profile_id":"P","cursor":1,"x":"}"#,
        // An id, op or profile id the general road refuses.
        #"{"id":true,"op":"sync","profile_id":"P","cursor":1}"#, #"{"id":[1],"op":"sync","profile_id":"P","cursor":1}"#,
        #"{"id":{},"op":"sync","profile_id":"P","cursor":1}"#, #"{"op":"SYNC","profile_id":"P","cursor":1}"#,
        #"{"profile_id":"P","cursor":1}"#, #"{"op":null,"profile_id":"P","cursor":1}"#,
        #"{"op":"sync","profile_id":"gh_short","cursor":1}"#, #"{"op":"sync","profile_id":7,"cursor":1}"#,
        #"{"op":"sync","profile_id":null,"cursor":1}"#, #"{"op":"sync","cursor":1}"#,
        #"{"op":"sync","profile_id":"P","cursor":1,"op":"ping"}"#,
    ])
    func aLineTheGeneralRoadRefusesIsLeftToIt(_ line: String) {
        let line = naming(Self.profile, in: line)
        #expect(GeneralRoad.sync(line) == nil, "the case is one the general road refuses")
        #expect(Self.scan(line) == nil, "\(String(decoding: line, as: UTF8.self))")
    }

    @Test func invalidUTF8AnywhereIsLeftToTheGeneralRoad() {
        for bytes: [UInt8] in [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xC0, 0xAF]] {
            let line = Array(#"{"op":"sync","profile_id":"\#(Self.profile)","cursor":1,"x":""#.utf8) + bytes + Array(#""}"#.utf8)
            #expect(GeneralRoad.sync(line) == nil)
            #expect(Self.scan(line) == nil, "\(bytes)")
        }
    }

    @Test func nestingIsBoundedAsTheGeneralParserBoundsIt() {
        // The request object is one level of the parser's limit; a skipped member's value the rest.
        func line(depth: Int) -> [UInt8] {
            let value = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            return Array(#"{"op":"sync","profile_id":"\#(Self.profile)","cursor":1,"x":\#(value)}"#.utf8)
        }
        let deepest = JSONParser.defaultMaxDepth - 1
        #expect(Self.scan(line(depth: deepest)) != nil)
        Self.expectBothRoadsAgree(line(depth: deepest))
        #expect(Self.scan(line(depth: deepest + 1)) == nil)
        Self.expectBothRoadsAgree(line(depth: deepest + 1))
    }

    @Test func everyGeneratedShapeIsReadAndAnsweredAsTheGeneralRoadAnswersIt() {
        var shapes = RequestShapes(seed: 17)
        for _ in 0..<2_000 {
            let line = shapes.line([
                (name: "op", value: shapes.string("sync")), (name: "profile_id", value: shapes.string(Self.profile)),
                (name: "cursor", value: shapes.integer(shapes.number(in: 0...1_000_000))),
            ])
            #expect(GeneralRoad.sync(line) != nil, "the generator writes legal syncs: \(String(decoding: line, as: UTF8.self))")
            #expect(Self.scan(line) != nil, "\(String(decoding: line, as: UTF8.self))")
            Self.expectBothRoadsAgree(line)
        }
    }

    @Test func everyLineNearALegalOneIsReadAsTheGeneralRoadReadsItOrLeftToIt() {
        var shapes = RequestShapes(seed: 71)
        for _ in 0..<12 {
            let line = shapes.line([
                (name: "op", value: shapes.string("sync")), (name: "profile_id", value: shapes.string(Self.profile)),
                (name: "cursor", value: shapes.integer(42)),
            ])
            expectNearbyLinesAgree(line, general: { GeneralRoad.sync($0) != nil }, scans: { Self.scan($0) != nil },
                                   agree: { Self.expectBothRoadsAgree($0) })
        }
    }
}
