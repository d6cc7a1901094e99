import GatehouseBase
import GatehouseCore

/// What web sales keep beside their purchases (docs/data-format.md, "Web purchases"): the
/// pending owners, in purchase key order, each as store, id and profile id; from state version
/// 9 on, Stripe's links and refunds after them (``writeStripe(_:into:)``).
enum WebCoding {
    static func write(_ web: WebPurchases, into writer: inout ByteWriter) {
        writer.writeArray(web.pendingOwners.sorted { $0.key < $1.key }) { writer, entry in
            writePendingOwner(entry.key, entry.value, into: &writer)
        }
        writeStripe(web, into: &writer)
    }

    /// `version`: the state version, whose web purchases end after the pending owners before 9.
    static func read(_ reader: inout ByteReader, version: UInt64) throws(ByteReaderError) -> WebPurchases {
        let start = reader.offset
        let entries = try reader.readArray { reader throws(ByteReaderError) in try readPendingOwner(&reader) }
        var pending: [PurchaseKey: ProfileID] = [:]
        for (key, id) in entries {
            guard pending.updateValue(id, forKey: key) == nil else { throw ByteReaderError.invalid("a purchase pending twice", at: start) }
        }
        let stripe = version >= 9 ? try readStripe(&reader) : Stripe()
        return WebPurchases(pendingOwners: pending, paymentInvoices: stripe.paymentInvoices,
                            invoiceSubscriptions: stripe.invoiceSubscriptions, refundedFractions: stripe.refundedFractions)
    }

    static func writePendingOwner(_ key: PurchaseKey, _ id: ProfileID, into writer: inout ByteWriter) {
        writer.writeString(key.store)
        writer.writeString(key.id)
        ProfileCoding.writeID(id, into: &writer)
    }

    static func readPendingOwner(_ reader: inout ByteReader) throws(ByteReaderError) -> (PurchaseKey, ProfileID) {
        let key = PurchaseKey(store: try reader.readString(), id: try reader.readString())
        return (key, try ProfileCoding.readID(&reader))
    }

    // MARK: Stripe's links and refunds (state version 9)

    /// The payments' invoices (payment id, invoice id), the invoices' subscriptions (invoice id,
    /// subscription id) and the refunds that left their purchase (transaction id, fraction), each
    /// array in key order, so equal states write equal bytes.
    static func writeStripe(_ web: WebPurchases, into writer: inout ByteWriter) {
        writeLinks(web.paymentInvoices, into: &writer)
        writeLinks(web.invoiceSubscriptions, into: &writer)
        writer.writeArray(web.refundedFractions.sorted { $0.key < $1.key }) { writeRefund($1.key, $1.value, into: &$0) }
    }

    /// What ``writeStripe(_:into:)`` writes, read back (empty before state version 9).
    struct Stripe {
        var paymentInvoices: [String: String] = [:]
        var invoiceSubscriptions: [String: String] = [:]
        var refundedFractions: [String: Double] = [:]
    }

    /// A key listed twice, or a fraction outside 0 (excluded) … 1, is damage.
    static func readStripe(_ reader: inout ByteReader) throws(ByteReaderError) -> Stripe {
        let paymentInvoices = try readLinks(&reader, "a Stripe payment")
        let invoiceSubscriptions = try readLinks(&reader, "a Stripe invoice")
        let start = reader.offset
        let refunds = try reader.readArray { reader throws(ByteReaderError) in try readRefund(&reader) }
        return Stripe(paymentInvoices: paymentInvoices, invoiceSubscriptions: invoiceSubscriptions,
                      refundedFractions: try unique(refunds, "a Stripe refund", at: start))
    }

    static func writeRefund(_ transactionID: String, _ fraction: Double, into writer: inout ByteWriter) {
        writer.writeString(transactionID)
        PurchaseCoding.writeDouble(fraction, into: &writer)
    }

    static func readRefund(_ reader: inout ByteReader) throws(ByteReaderError) -> (String, Double) {
        let transactionID = try reader.readString()
        let start = reader.offset
        let fraction = try PurchaseCoding.readDouble(&reader)
        guard fraction > 0, fraction <= 1 else { throw ByteReaderError.invalid("refunded fraction \(fraction)", at: start) }
        return (transactionID, fraction)
    }

    private static func writeLinks(_ links: [String: String], into writer: inout ByteWriter) {
        writer.writeArray(links.sorted { $0.key < $1.key }) { writer, link in
            writer.writeString(link.key)
            writer.writeString(link.value)
        }
    }

    private static func readLinks(_ reader: inout ByteReader, _ what: String) throws(ByteReaderError) -> [String: String] {
        let start = reader.offset
        let links = try reader.readArray { reader throws(ByteReaderError) in (try reader.readString(), try reader.readString()) }
        return try unique(links, what, at: start)
    }

    private static func unique<Value>(_ entries: [(String, Value)], _ what: String, at offset: Int) throws(ByteReaderError)
        -> [String: Value]
    {
        var map: [String: Value] = [:]
        map.reserveCapacity(entries.count)
        for (key, value) in entries {
            guard map.updateValue(value, forKey: key) == nil else { throw ByteReaderError.invalid("\(what) listed twice", at: offset) }
        }
        return map
    }
}
