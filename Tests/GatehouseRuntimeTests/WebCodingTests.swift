import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import Testing

/// What web sales keep beside their purchases (docs/data-format.md, "Web purchases"): the
/// changes that record it read back as written, the state's web purchases travel with it, and
/// damaged bytes are refused. Their exact bytes are a format: a change here is a format change.
@Suite struct WebPurchaseCoding {
    typealias F = Version3Fixtures

    static let stripe = PurchaseKey(store: "stripe", id: "sub_1")

    @Test(arguments: [
        ProjectState.Change.pendingOwnerRecorded(stripe, F.profileA),
        .stripePaymentLinked(payment: "pi_1", invoice: "in_1"),
        .stripePaymentLinked(payment: "ch_ü", invoice: ""),
        .stripeInvoiceLinked(invoice: "in_1", subscription: "sub_1"),
        .stripeRefundRecorded(transactionID: "in_1", fraction: 0.1),
        .stripeRefundRecorded(transactionID: "pi_1", fraction: 1),
        .stripeRefundRecorded(transactionID: "pi_2", fraction: .leastNonzeroMagnitude),
    ])
    func everyWebChangeRoundTripsThroughARecord(_ change: ProjectState.Change) throws {
        let record = RuntimeRecord.projectChanged(7, .init([change], atMs: 5))
        #expect(try RuntimeRecord(record.logRecord) == record)
    }

    /// Incarnation 5, at 3 ms (zigzag 6), one change: its tag, its fields.
    static func payload(_ change: ProjectState.Change) -> String {
        Hex.encode(RuntimeRecord.projectChanged(5, .init([change], atMs: 3)).logRecord.payload)
    }

    @Test func theStripeChangesWriteTheseBytes() {
        #expect(Self.payload(.stripePaymentLinked(payment: "pi_1", invoice: "in_1")) == "050601" + "1e" + F.str("pi_1") + F.str("in_1"))
        #expect(Self.payload(.stripeInvoiceLinked(invoice: "in_1", subscription: "sub_1")) == "050601" + "1f" + F.str("in_1") + F.str("sub_1"))
        // 0.5 as its IEEE 754 bit pattern, little-endian.
        #expect(Self.payload(.stripeRefundRecorded(transactionID: "in_1", fraction: 0.5)) == "050601" + "20" + F.str("in_1") + "000000000000e03f")
    }

    @Test(arguments: [0.0, -0.5, 1.5, Double.nan, Double.infinity])
    func aRefundOfAFractionOutOfRangeIsRefused(_ fraction: Double) throws {
        var writer = ByteWriter()
        WebCoding.writeRefund("in_1", fraction, into: &writer)
        let bytes = try #require(Hex.decode("050601" + "20" + Hex.encode(writer.bytes)))
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(WALRecord(kind: 16, payload: bytes)) }
    }

    /// `RecordCoding.state` with a pending owner and Stripe's links and refunds.
    static var state: ProjectState {
        var state = RecordCoding.state
        state.apply(.init([
            .pendingOwnerRecorded(PurchaseKey(store: "stripe", id: "pi_9"), F.profileA),
            .stripePaymentLinked(payment: "pi_2", invoice: "in_2"),
            .stripePaymentLinked(payment: "pi_1", invoice: "in_1"),
            .stripeInvoiceLinked(invoice: "in_1", subscription: "sub_1"),
            .stripeRefundRecorded(transactionID: "in_1", fraction: 0.25),
        ], atMs: 6))
        return state
    }

    /// What follows Stripe's part at the end of section 0: no link key, no redemption links, no
    /// Checkout Sessions.
    static let noRedemption = "00" + "00" + "00"

    /// The end of section 0 but for `noRedemption`: the pending owner, then the payments'
    /// invoices and the invoices' subscriptions in key order, then the refunds (0.25 is `3fd0…`).
    static let webHex = "01" + F.str("stripe") + F.str("pi_9") + F.profileAHex
        + "02" + F.str("pi_1") + F.str("in_1") + F.str("pi_2") + F.str("in_2")
        + "01" + F.str("in_1") + F.str("sub_1")
        + "01" + F.str("in_1") + "000000000000d03f"

    @Test func theStateKeepsItsWebPurchasesInTheseBytes() throws {
        let state = Self.state
        let head = Hex.encode(StateCoding.sectionBytes(of: state)[0])
        #expect(head.hasSuffix(Self.webHex + Self.noRedemption), "\(head)")
        let decoded = try F.decodeBothWays(StateCoding.encode(state))
        #expect(decoded == state)
        #expect(decoded.web == state.web)
        #expect(decoded.web.paymentInvoices == ["pi_1": "in_1", "pi_2": "in_2"])
        #expect(decoded.web.invoiceSubscriptions == ["in_1": "sub_1"])
        #expect(decoded.web.refundedFractions == ["in_1": 0.25])
        #expect(decoded != RecordCoding.state, "the web purchases are part of the state's equality")
    }

    @Test func aVersion8BodyReadsWithoutStripesLinks() throws {
        var state = RecordCoding.state
        state.apply(.init([.pendingOwnerRecorded(PurchaseKey(store: "stripe", id: "pi_9"), F.profileA)], atMs: 6))
        var sections = StateCoding.sectionBytes(of: state)
        let head = Hex.encode(sections[0])
        try #require(head.hasSuffix("00" + "00" + "00" + Self.noRedemption))
        sections[0] = try #require(Hex.decode(String(head.dropLast(12))))
        var body = StateCoding.body(sections: sections)
        body[0] = 8
        let decoded = try F.decodeBothWays(body)
        #expect(decoded == state)
        #expect(decoded.web.pendingOwners.count == 1)
        // Written again, it is version 9, with the (empty) links.
        #expect(StateCoding.encode(decoded) == StateCoding.encode(state))
    }

    @Test(arguments: [
        "02" + F.str("pi_1") + F.str("in_1") + F.str("pi_1") + F.str("in_2") + "00" + "00",
        "00" + "02" + F.str("in_1") + F.str("sub_1") + F.str("in_1") + F.str("sub_2") + "00",
        "00" + "00" + "02" + F.str("in_1") + "000000000000d03f" + F.str("in_1") + "000000000000e03f",
        "00" + "00" + "01" + F.str("in_1") + "0000000000000000",
    ])
    func aKeyListedTwiceOrAFractionOutOfRangeIsDamage(_ stripe: String) throws {
        var sections = StateCoding.sectionBytes(of: RecordCoding.state)
        let head = Hex.encode(sections[0])
        sections[0] = try #require(Hex.decode(String(head.dropLast(12)) + stripe + Self.noRedemption))
        #expect(throws: ByteReaderError.self) { try F.decodeBothWays(StateCoding.body(sections: sections)) }
    }
}
