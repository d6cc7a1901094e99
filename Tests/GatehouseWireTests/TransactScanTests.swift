import GatehouseCore
import GatehouseWire
import Testing

/// ``TransactScan`` reads the plain shape of `currency.transact` and nothing else: every other
/// shape answers `nil`, for the general parser to read.
@Suite struct TransactScans {
    private static func scan(_ line: String) -> TransactScan? {
        Array(line.utf8).withUnsafeBytes { TransactScan.scan($0) }
    }

    private static let profile = ProfileID(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210, tag: 0x00AB_CDEF).description

    @Test func readsEveryMemberInAnyOrderWithSpaces() throws {
        let line = #" { "reason" : "bonus", "amount":-250 ,"idempotency_key":"k-1","currency":"COINS","profile_id":"\#(Self.profile)","op":"currency.transact","id":7 } "#
        let scan = try #require(Self.scan(line))
        #expect(scan.id == .int(7))
        #expect(scan.profileID.description == Self.profile)
        #expect(scan.currency == "COINS")
        #expect(scan.amount == -250)
        #expect(scan.idempotencyKey == "k-1")
        #expect(scan.reason == "bonus")
    }

    @Test func idAndReasonAreOptionalAndIdsKeepTheirText() throws {
        let base = #""op":"currency.transact","profile_id":"\#(Self.profile)","currency":"C","amount":1,"idempotency_key":"k""#
        let bare = try #require(Self.scan("{\(base)}"))
        #expect(bare.id == .null)
        #expect(bare.reason == nil)
        #expect(try #require(Self.scan(#"{"id":"abc",\#(base)}"#)).id == .string("abc"))
        #expect(try #require(Self.scan(#"{"id":-12,\#(base)}"#)).id == .number(JSONNumber(uncheckedText: "-12")))
    }

    @Test(arguments: [
        // A profile id that is not one.
        #"{"op":"currency.transact","profile_id":"gh_short","currency":"C","amount":1,"idempotency_key":"k"}"#,
        // Another op, or none.
        #"{"op":"currency.history","profile_id":"P","currency":"C","amount":1,"idempotency_key":"k"}"#,
        #"{"profile_id":"P","currency":"C","amount":1,"idempotency_key":"k"}"#,
        // A member missing, repeated or unknown.
        #"{"op":"currency.transact","profile_id":"P","amount":1,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1,"amount":2,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","customer_user_id":"u","currency":"C","amount":1,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1,"idempotency_key":"k","extra":1}"#,
        // Values of another form: escapes, non-ASCII, fractions, exponents, leading zeros, quotes, null.
        #"{"op":"currency.transact","profile_id":"P","currency":"C\u0041","amount":1,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"é","amount":1,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1.5,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1e2,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":01,"idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":"1","idempotency_key":"k"}"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1,"idempotency_key":"k","reason":null}"#,
        #"{"id":true,"op":"currency.transact","profile_id":"P","currency":"C","amount":1,"idempotency_key":"k"}"#,
        // Not one whole object.
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1,"idempotency_key":"k"} x"#,
        #"{"op":"currency.transact","profile_id":"P","currency":"C","amount":1,"idempotency_key":"k""#,
        #"["op"]"#,
    ])
    func anyOtherShapeIsLeftToTheGeneralParser(_ line: String) {
        let withID = line.split(separator: "\"P\"", omittingEmptySubsequences: false).joined(separator: "\"\(Self.profile)\"")
        #expect(Self.scan(withID) == nil)
    }

    @Test func theShapesRefusedAboveAreReadOnceMadePlain() {
        // The control for the cases above: the plain line with the same profile id is read.
        let line = #"{"op":"currency.transact","profile_id":"\#(Self.profile)","currency":"C","amount":1,"idempotency_key":"k"}"#
        #expect(Self.scan(line) != nil)
    }
}
