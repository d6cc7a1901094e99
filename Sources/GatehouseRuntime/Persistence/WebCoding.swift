import GatehouseBase
import GatehouseCore

/// What web sales keep beside their purchases (docs/data-format.md, "Web purchases"): the
/// pending owners, in purchase key order, each as store, id and profile id; from state version 9
/// Stripe's links and refunds (``writeStripe(_:into:)``), then the link key (absent or 32 bytes),
/// the redemption links in purchase key order, and the Checkout Sessions in id order.
enum WebCoding {
    static func write(_ web: WebPurchases, into writer: inout ByteWriter) {
        writer.writeArray(web.pendingOwners.sorted { $0.key < $1.key }) { writer, entry in
            writePendingOwner(entry.key, entry.value, into: &writer)
        }
        writeStripe(web, into: &writer)
        writeRedemption(web, into: &writer)
    }

    /// `version`: the state version, whose web purchases end after the pending owners before 9.
    static func read(_ reader: inout ByteReader, version: UInt64) throws(ByteReaderError) -> WebPurchases {
        let start = reader.offset
        let entries = try reader.readArray { reader throws(ByteReaderError) in try readPendingOwner(&reader) }
        var pending: [PurchaseKey: ProfileID] = [:]
        for (key, id) in entries {
            guard pending.updateValue(id, forKey: key) == nil else { throw ByteReaderError.invalid("a purchase pending twice", at: start) }
        }
        guard version >= 9 else { return WebPurchases(pendingOwners: pending) }
        let stripe = try readStripe(&reader)
        let (linkKey, links, sessions) = try readRedemption(&reader)
        return WebPurchases(pendingOwners: pending, linkKey: linkKey, links: links, sessions: sessions,
                            paymentInvoices: stripe.paymentInvoices, invoiceSubscriptions: stripe.invoiceSubscriptions,
                            refundedFractions: stripe.refundedFractions)
    }

    private static func writeRedemption(_ web: WebPurchases, into writer: inout ByteWriter) {
        writer.writeOptional(web.linkKey) { writer, key in writer.writeBytes(key) }
        writer.writeArray(web.links.sorted { $0.key < $1.key }) { writer, entry in
            writeKey(entry.key, into: &writer)
            writeLink(entry.value, into: &writer)
        }
        writer.writeArray(web.sessions.sorted { $0.key < $1.key }) { writer, entry in
            writer.writeString(entry.key)
            writeKey(entry.value, into: &writer)
        }
    }

    private static func readRedemption(_ reader: inout ByteReader) throws(ByteReaderError)
        -> ([UInt8]?, [PurchaseKey: RedemptionLink], [String: PurchaseKey])
    {
        let keyOffset = reader.offset
        let linkKey = try reader.readOptional { reader throws(ByteReaderError) in try reader.readBytes() }
        if let linkKey, linkKey.count != RedemptionToken.keyLength { throw ByteReaderError.invalid("link key length", at: keyOffset) }
        let linksOffset = reader.offset
        let linkList = try reader.readArray { reader throws(ByteReaderError) in (try readKey(&reader), try readLink(&reader)) }
        let links = Dictionary(linkList, uniquingKeysWith: { first, _ in first })
        guard links.count == linkList.count, linkKey != nil || links.isEmpty else {
            throw ByteReaderError.invalid("links of one purchase twice, or links without a key", at: linksOffset)
        }
        let sessionsOffset = reader.offset
        let sessionList = try reader.readArray { reader throws(ByteReaderError) in (try reader.readString(), try readKey(&reader)) }
        let sessions = Dictionary(sessionList, uniquingKeysWith: { first, _ in first })
        guard sessions.count == sessionList.count else { throw ByteReaderError.invalid("a session twice", at: sessionsOffset) }
        return (linkKey, links, sessions)
    }

    static func writeKey(_ key: PurchaseKey, into writer: inout ByteWriter) {
        writer.writeString(key.store)
        writer.writeString(key.id)
    }

    static func readKey(_ reader: inout ByteReader) throws(ByteReaderError) -> PurchaseKey {
        PurchaseKey(store: try reader.readString(), id: try reader.readString())
    }

    /// Web profile, generation, issue time, last email time, the owed email (attempts, next
    /// attempt, last error), and the redeeming profile.
    static func writeLink(_ link: RedemptionLink, into writer: inout ByteWriter) {
        ProfileCoding.writeID(link.webProfile, into: &writer)
        writer.writeVarUInt(UInt64(link.generation))
        writer.writeVarInt(link.issuedMs)
        writer.writeOptional(link.emailedMs) { writer, at in writer.writeVarInt(at) }
        writer.writeOptional(link.mail) { writer, mail in
            writer.writeVarUInt(UInt64(mail.attempts))
            writer.writeVarInt(mail.nextAttemptMs)
            writer.writeOptional(mail.lastError) { writer, error in writer.writeString(error) }
        }
        writer.writeOptional(link.redeemedBy) { writer, id in ProfileCoding.writeID(id, into: &writer) }
    }

    static func readLink(_ reader: inout ByteReader) throws(ByteReaderError) -> RedemptionLink {
        let webProfile = try ProfileCoding.readID(&reader)
        let generationOffset = reader.offset
        guard let generation = UInt32(exactly: try reader.readVarUInt()), generation >= 1 else {
            throw ByteReaderError.invalid("link generation", at: generationOffset)
        }
        let issuedMs = try reader.readVarInt()
        let emailedMs = try reader.readOptional { reader throws(ByteReaderError) in try reader.readVarInt() }
        let mail = try reader.readOptional { reader throws(ByteReaderError) -> OwedMail in
            let attemptsOffset = reader.offset
            guard let attempts = UInt16(exactly: try reader.readVarUInt()) else {
                throw ByteReaderError.invalid("mail attempts", at: attemptsOffset)
            }
            return OwedMail(attempts: attempts, nextAttemptMs: try reader.readVarInt(),
                            lastError: try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() })
        }
        let redeemedBy = try reader.readOptional { reader throws(ByteReaderError) in try ProfileCoding.readID(&reader) }
        return RedemptionLink(webProfile: webProfile, generation: generation, issuedMs: issuedMs, emailedMs: emailedMs, mail: mail,
                              redeemedBy: redeemedBy)
    }

    static func writePendingOwner(_ key: PurchaseKey, _ id: ProfileID, into writer: inout ByteWriter) {
        writeKey(key, into: &writer)
        ProfileCoding.writeID(id, into: &writer)
    }

    static func readPendingOwner(_ reader: inout ByteReader) throws(ByteReaderError) -> (PurchaseKey, ProfileID) {
        (try readKey(&reader), try ProfileCoding.readID(&reader))
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

    /// What ``writeStripe(_:into:)`` writes, read back.
    struct Stripe {
        var paymentInvoices: [String: String]
        var invoiceSubscriptions: [String: String]
        var refundedFractions: [String: Double]
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
