import GatehouseCore
import GatehouseWire
import Testing

/// ``TransactScan`` reads `currency.transact` in every shape the protocol allows, and reads
/// from it what the general road reads; every line the general road refuses it leaves alone.
@Suite struct TransactScans {
    private static func scan(_ line: [UInt8]) -> TransactScan? {
        line.withUnsafeBytes { TransactScan.scan($0) }
    }

    private static func scan(_ line: String) -> TransactScan? { scan(Array(line.utf8)) }

    private static let profile = ProfileID(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210, tag: 0x00AB_CDEF).description

    private static let base = #""op":"currency.transact","profile_id":"\#(profile)","currency":"C","amount":1,"idempotency_key":"k""#

    /// Both roads read `line` alike, or both leave it.
    private static func expectBothRoadsAgree(_ line: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(scan(line).map(GeneralRoad.transact) == GeneralRoad.transact(line), "\(String(decoding: line, as: UTF8.self))",
                sourceLocation: sourceLocation)
    }

    @Test func readsEveryMemberInAnyOrderWithAnyJSONWhitespace() throws {
        let line = " { \"reason\" : \"bonus\",\r\"amount\":-250 ,\t\"idempotency_key\":\"k-1\",\"currency\":\"COINS\",\"profile_id\":\"\(Self.profile)\",\n\"op\":\"currency.transact\",\"id\":7 }\r"
        let scan = try #require(Self.scan(line))
        #expect(scan.id == .int(7))
        #expect(scan.profile == .id(try #require(ProfileID(parsing: Self.profile))))
        #expect(scan.currency == "COINS")
        #expect(scan.amount == -250)
        #expect(scan.idempotencyKey == "k-1")
        #expect(scan.reason == "bonus")
    }

    @Test func idAndReasonAreOptional() throws {
        let bare = try #require(Self.scan("{\(Self.base)}"))
        #expect(bare.id == .null)
        #expect(bare.reason == nil)
        #expect(try #require(Self.scan(#"{"id":null,\#(Self.base),"reason":null}"#)).reason == nil)
    }

    @Test(arguments: RequestShapes.ids)
    func anIDOfEveryFormIsReadAsTheGeneralParserReadsIt(_ id: String) throws {
        let line = Array(#"{"id":\#(id),\#(Self.base)}"#.utf8)
        #expect(Self.scan(line) != nil)
        Self.expectBothRoadsAgree(line)
    }

    @Test func aCustomerUserIDNamesTheProfileAndAProfileIDWinsOverIt() throws {
        let byCustomer = #"{"op":"currency.transact","customer_user_id":"u\u00e9 1","currency":"C","amount":1,"idempotency_key":"k"}"#
        #expect(try #require(Self.scan(byCustomer)).profile == .customerUserID("ué 1"))
        let both = #"{"customer_user_id":"u",\#(Self.base)}"#
        #expect(try #require(Self.scan(both)).profile == .id(try #require(ProfileID(parsing: Self.profile))))
        Self.expectBothRoadsAgree(Array(byCustomer.utf8))
        Self.expectBothRoadsAgree(Array(both.utf8))
    }

    @Test func escapesAndOtherCharactersAreDecoded() throws {
        let line = #"{"op":"currency.tr\u0061nsact","profile_id":"\#(Self.profile)","currency":"CO\u0049NS","amount":1,"idempotency_key":"ключ\n","reason":"\ud83d\ude00 \"x\""}"#
        let scan = try #require(Self.scan(line))
        #expect(scan.currency == "COINS")
        #expect(scan.idempotencyKey == "ключ\n")
        #expect(scan.reason == "😀 \"x\"")
    }

    @Test(arguments: ["5", "5.0", "0.5e1", "50E-1", "-5", "-5.00", "-0.05e2"])
    func anAmountInAnyFormOfAnIntegerIsThatInteger(_ amount: String) throws {
        let line = #"{"op":"currency.transact","profile_id":"\#(Self.profile)","currency":"C","amount":\#(amount),"idempotency_key":"k"}"#
        #expect(try #require(Self.scan(line)).amount.magnitude == 5)
        Self.expectBothRoadsAgree(Array(line.utf8))
    }

    @Test(arguments: RequestShapes.extras.map { "\"\($0.name)\":\($0.value)" })
    func membersItDoesNotKnowAreSkippedWhateverTheirValue(_ member: String) throws {
        let line = Array(#"{\#(member),\#(Self.base),\#(member)}"#.utf8)
        #expect(Self.scan(line) != nil)
        Self.expectBothRoadsAgree(line)
    }

    @Test func aRepeatedMemberCountsWithItsLastValue() throws {
        let line = #"{\#(Self.base),"amount":2,"currency":"D","idempotency_key":"k2","id":1,"id":"two","reason":"r","reason":null}"#
        let scan = try #require(Self.scan(line))
        #expect(scan.amount == 2 && scan.currency == "D" && scan.idempotencyKey == "k2" && scan.id == .string("two"))
        #expect(scan.reason == nil)
        Self.expectBothRoadsAgree(Array(line.utf8))
    }

    @Test(arguments: [
        // A profile id that is not one, or no profile at all.
        #"{"op":"currency.transact","profile_id":"gh_short","currency":"C","amount":1,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"gh_short","customer_user_id":"u","currency":"C","amount":1,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","currency":"C","amount":1,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":null,"customer_user_id":null,"currency":"C","amount":1,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","customer_user_id":7,"currency":"C","amount":1,"idempotency_key":"k"}"#,
        // Another op, or none.
        #"{"op":"currency.history","profile_id":"P","currency":"C","amount":1,"idempotency_key":"k"}"#,
        #"{"profile_id":"P","currency":"C","amount":1,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1,"idempotency_key":"k","op":"sync"}"#,
        // A member missing.
        #"{"op":"currency.transact","profile_id":"P","amount":1,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":null,"idempotency_key":"k"}"#,
        // Values of a type or form the op does not take.
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1.5,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1e400,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":01,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":"1","idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":99999999999999999999,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":5,"amount":1,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1,"idempotency_key":["k"]}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1,"idempotency_key":"k","reason":false}"#,
        #"{"id":true,"op":"currency.transact","profile_id":"P","currency":"C","amount":1,"idempotency_key":"k"}"#,
        // Not one whole JSON object.
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1,"idempotency_key":"k"} x"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1,"idempotency_key":"k""#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1,"idempotency_key":"k","x":[}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C\x","amount":1,"idempotency_key":"k"}"#,
        #"["op"]"#,
    ])
    func aLineTheGeneralRoadRefusesIsLeftToIt(_ line: String) {
        let line = naming(Self.profile, in: line)
        #expect(GeneralRoad.transact(line) == nil, "the case is one the general road refuses")
        #expect(Self.scan(line) == nil)
    }

    @Test func everyGeneratedShapeIsReadAsTheGeneralRoadReadsIt() {
        var shapes = RequestShapes(seed: 7)
        for _ in 0..<2_000 {
            var members = [
                (name: "op", value: shapes.string("currency.transact")), (name: "currency", value: shapes.string("COINS")),
                (name: "amount", value: shapes.integer(shapes.number(in: -1_000...1_000))),
                (name: "idempotency_key", value: shapes.string("key-\(shapes.number(in: 0...9_999))")),
            ]
            if shapes.chance(2) { members.append((name: "profile_id", value: shapes.string(Self.profile))) }
            if members.count == 4 || shapes.chance(3) { members.append((name: "customer_user_id", value: shapes.string("user/7"))) }
            if shapes.chance(2) { members.append((name: "reason", value: shapes.chance(4) ? "null" : shapes.string("bonus"))) }
            let line = shapes.line(members)
            #expect(GeneralRoad.transact(line) != nil, "the generator writes legal transacts: \(String(decoding: line, as: UTF8.self))")
            #expect(Self.scan(line) != nil, "\(String(decoding: line, as: UTF8.self))")
            Self.expectBothRoadsAgree(line)
        }
    }

    @Test func everyLineNearALegalOneIsReadAsTheGeneralRoadReadsItOrLeftToIt() {
        var shapes = RequestShapes(seed: 77)
        for _ in 0..<8 {
            let line = shapes.line([
                (name: "op", value: shapes.string("currency.transact")), (name: "profile_id", value: shapes.string(Self.profile)),
                (name: "currency", value: shapes.string("C")), (name: "amount", value: shapes.integer(-3)),
                (name: "idempotency_key", value: shapes.string("k1")), (name: "reason", value: shapes.string("r")),
            ])
            expectNearbyLinesAgree(line, general: { GeneralRoad.transact($0) != nil }, scans: { Self.scan($0) != nil },
                                   agree: { Self.expectBothRoadsAgree($0) })
        }
    }
}
