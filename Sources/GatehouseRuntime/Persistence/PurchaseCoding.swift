import GatehouseBase
import GatehouseCore

/// Purchases, grants and the purchase book in binary (docs/data-format.md, "Runtime records and
/// snapshot bodies").
/// Prices and refund fractions are IEEE doubles by bit pattern, so they come back exactly.
enum PurchaseCoding {
    static func writeDouble(_ value: Double, into writer: inout ByteWriter) {
        writer.writeUInt64(value.bitPattern)
    }

    static func readDouble(_ reader: inout ByteReader) throws(ByteReaderError) -> Double {
        Double(bitPattern: try reader.readUInt64())
    }

    static func writeOwnership(_ owner: ProfileID?, _ token: AppAccountToken?, into writer: inout ByteWriter) {
        writer.writeOptional(owner) { ProfileCoding.writeID($1, into: &$0) }
        writer.writeOptional(token) { ProfileCoding.writeToken($1, into: &$0) }
    }

    static func readOwnership(_ reader: inout ByteReader) throws(ByteReaderError) -> (ProfileID?, AppAccountToken?) {
        let owner = try reader.readOptional { reader throws(ByteReaderError) in try ProfileCoding.readID(&reader) }
        let token = try reader.readOptional { reader throws(ByteReaderError) in try ProfileCoding.readToken(&reader) }
        return (owner, token)
    }

    // MARK: Subscriptions

    static func write(_ held: HeldSubscription, into writer: inout ByteWriter) {
        let subscription = held.subscription
        writeOwnership(held.owner, held.token, into: &writer)
        writer.writeString(subscription.store)
        writer.writeString(subscription.originalTransactionID)
        writer.writeString(subscription.productID)
        writer.writeEnum(subscription.status)
        writer.writeVarInt(subscription.expiresMs)
        writer.writeOptional(subscription.graceExpiresMs) { $0.writeVarInt($1) }
        writer.writeBool(subscription.willRenew)
        writer.writeEnum(subscription.periodType)
        writer.writeEnum(subscription.environment)
        writer.writeArray(subscription.terms) { writer, term in
            writer.writeString(term.transactionID)
            writer.writeVarInt(term.purchasedMs)
            writer.writeVarInt(term.expiresMs)
            writeDouble(term.price, into: &writer)
            writeDouble(term.refundedFraction, into: &writer)
        }
        writer.writeVarInt(subscription.lastEventMs)
        writer.writeOptional(subscription.statusBeforeRefund) { $0.writeEnum($1) }
        writer.writeVarInt(subscription.statusMs)
        writer.writeVarInt(subscription.willRenewMs)
        writer.writeVarInt(subscription.productMs)
        writer.writeOptional(subscription.storeGraceExpiresMs) { $0.writeVarInt($1) }
        writer.writeArray(subscription.refundMarks.sorted { $0.key < $1.key }) { writer, mark in
            writer.writeString(mark.key)
            writeDouble(mark.value.fraction, into: &writer)
            writer.writeVarInt(mark.value.atMs)
        }
        writer.writeBool(subscription.familyShared)
    }

    static func readSubscription(_ reader: inout ByteReader) throws(ByteReaderError) -> HeldSubscription {
        let (owner, token) = try readOwnership(&reader)
        let store = try reader.readString()
        let originalTransactionID = try reader.readString()
        let productID = try reader.readString()
        let status = try reader.readEnum(SubscriptionStatus.self)
        let expiresMs = try reader.readVarInt()
        let graceExpiresMs = try reader.readOptional { reader throws(ByteReaderError) in try reader.readVarInt() }
        let willRenew = try reader.readBool()
        let periodType = try reader.readEnum(SubscriptionPeriodType.self)
        let environment = try reader.readEnum(StoreEnvironment.self)
        let terms = try reader.readArray { reader throws(ByteReaderError) in
            SubscriptionTerm(transactionID: try reader.readString(), purchasedMs: try reader.readVarInt(),
                             expiresMs: try reader.readVarInt(), price: try readDouble(&reader),
                             refundedFraction: try readDouble(&reader))
        }
        let lastEventMs = try reader.readVarInt()
        let statusBeforeRefund = try reader.readOptional { reader throws(ByteReaderError) in
            try reader.readEnum(SubscriptionStatus.self)
        }
        let statusMs = try reader.readVarInt()
        let willRenewMs = try reader.readVarInt()
        let productMs = try reader.readVarInt()
        let storeGraceExpiresMs = try reader.readOptional { reader throws(ByteReaderError) in try reader.readVarInt() }
        let marks = try reader.readArray { reader throws(ByteReaderError) in
            (try reader.readString(), Subscription.RefundMark(fraction: try readDouble(&reader), atMs: try reader.readVarInt()))
        }
        var refundMarks: [String: Subscription.RefundMark] = [:]
        for (id, mark) in marks {
            guard refundMarks.updateValue(mark, forKey: id) == nil else { throw ByteReaderError.invalid("refund mark \(id) twice", at: reader.offset) }
        }
        let familyShared = try reader.readBool()
        let subscription = Subscription(
            store: store, originalTransactionID: originalTransactionID, productID: productID, status: status,
            expiresMs: expiresMs, graceExpiresMs: graceExpiresMs, willRenew: willRenew, periodType: periodType,
            environment: environment, terms: terms, lastEventMs: lastEventMs, statusBeforeRefund: statusBeforeRefund,
            statusMs: statusMs, willRenewMs: willRenewMs, productMs: productMs, storeGraceExpiresMs: storeGraceExpiresMs,
            refundMarks: refundMarks, familyShared: familyShared)
        return HeldSubscription(subscription, owner: owner, token: token)
    }

    // MARK: One-time purchases and grants

    static func write(_ held: HeldPurchase, into writer: inout ByteWriter) {
        let purchase = held.purchase
        writeOwnership(held.owner, held.token, into: &writer)
        writer.writeString(purchase.store)
        writer.writeString(purchase.transactionID)
        writer.writeString(purchase.productID)
        writer.writeVarInt(purchase.purchasedMs)
        writeDouble(purchase.price, into: &writer)
        writer.writeEnum(purchase.environment)
        writer.writeBool(purchase.refunded)
        writer.writeBool(purchase.revoked)
        writer.writeBool(purchase.familyShared)
        writeDouble(purchase.refundedFraction, into: &writer)
    }

    static func readPurchase(_ reader: inout ByteReader) throws(ByteReaderError) -> HeldPurchase {
        let (owner, token) = try readOwnership(&reader)
        let purchase = OneTimePurchase(
            store: try reader.readString(), transactionID: try reader.readString(), productID: try reader.readString(),
            purchasedMs: try reader.readVarInt(), price: try readDouble(&reader),
            environment: try reader.readEnum(StoreEnvironment.self), refunded: try reader.readBool(),
            revoked: try reader.readBool(), familyShared: try reader.readBool(), refundedFraction: try readDouble(&reader))
        return HeldPurchase(purchase, owner: owner, token: token)
    }

    static func write(_ grant: PromotionalGrant, into writer: inout ByteWriter) {
        writer.writeString(grant.entitlementID)
        writer.writeVarInt(grant.grantedMs)
        writer.writeOptional(grant.expiresMs) { $0.writeVarInt($1) }
        writer.writeBool(grant.revoked)
        writer.writeBool(grant.lapsed)
    }

    static func readGrant(_ reader: inout ByteReader) throws(ByteReaderError) -> PromotionalGrant {
        PromotionalGrant(
            entitlementID: try reader.readString(), grantedMs: try reader.readVarInt(),
            expiresMs: try reader.readOptional { reader throws(ByteReaderError) in try reader.readVarInt() },
            revoked: try reader.readBool(), lapsed: try reader.readBool())
    }

    // MARK: The book

    /// Stored parts in a deterministic order: equal books write equal bytes.
    static func write(_ book: PurchaseBook, into writer: inout ByteWriter) {
        writeByKey(book.subscriptions, order: book.subscriptionSlotsByKey, into: &writer) { write($1, into: &$0) }
        writeByKey(book.oneTimePurchases, order: book.oneTimePurchaseSlotsByKey, into: &writer) { write($1, into: &$0) }
        writer.writeArray(book.allGrants) { writer, entry in
            ProfileCoding.writeID(entry.0, into: &writer)
            write(entry.1, into: &writer)
        }
        // As `writeArray` of each key (`writeString`) and time, without a `String` made for each.
        writer.writeVarUInt(UInt64(book.seenNotificationCount))
        book.forEachSeenNotification { key, atMs in
            writer.writeBytes(key)
            writer.writeVarInt(atMs)
        }
        let former = book.formerSources.sorted { $0.key < $1.key }.flatMap { entry in entry.value.map { (entry.key, $0) } }
        writer.writeArray(former) { writer, entry in
            ProfileCoding.writeID(entry.0, into: &writer)
            writer.writeUInt8(entry.1.kind.rawValue)
            writer.writeString(entry.1.key.store)
            writer.writeString(entry.1.key.id)
        }
    }

    /// The purchases in `order` (their slots ordered by key), gathered in batches
    /// (``Swift/Array/forEachGathered(at:_:)``).
    private static func writeByKey<Held: KeyedPurchase>(_ table: PurchaseTable<Held>, order: [Int], into writer: inout ByteWriter,
                                                        _ write: (inout ByteWriter, Held) -> Void)
    {
        writer.writeVarUInt(UInt64(order.count))
        table.values.forEachGathered(at: order) { write(&writer, $0) }
    }

    /// A key listed twice is damage (the writer never does it), refused rather than guessed at.
    static func readBook(_ reader: inout ByteReader) throws(ByteReaderError) -> PurchaseBook {
        let start = reader.offset
        let subscriptions = try reader.readArray { reader throws(ByteReaderError) in try readSubscription(&reader) }
        let purchases = try reader.readArray { reader throws(ByteReaderError) in try readPurchase(&reader) }
        let grants = try reader.readArray { reader throws(ByteReaderError) in
            (try ProfileCoding.readID(&reader), try readGrant(&reader))
        }
        let seen = try reader.readArray { reader throws(ByteReaderError) in
            SeenNotification(key: try reader.readString(), atMs: try reader.readVarInt())
        }
        let former = try reader.readArray { reader throws(ByteReaderError) in
            let profile = try ProfileCoding.readID(&reader)
            let kindOffset = reader.offset
            guard let kind = FormerSource.Kind(rawValue: try reader.readUInt8()) else {
                throw ByteReaderError.invalid("former source kind", at: kindOffset)
            }
            return (profile, FormerSource(kind: kind, key: PurchaseKey(store: try reader.readString(), id: try reader.readString())))
        }
        var formerSources: [ProfileID: [FormerSource]] = [:]
        for (profile, source) in former { formerSources[profile, default: []].append(source) }
        let distinctParts = formerSources.values.allSatisfy { $0 == $0.sorted() && Set($0).count == $0.count }
            && Set(seen.map(\.key)).count == seen.count
        guard distinctParts else { throw ByteReaderError.invalid("purchase book with a key listed twice", at: start) }
        // The book files each purchase and grant by its key, one per key: fewer in the book
        // than were read means a key was listed twice (no set of a million keys is built to
        // find out).
        let book = PurchaseBook(subscriptions: subscriptions, oneTimePurchases: purchases, grants: grants,
                                seenNotifications: seen, formerSources: formerSources)
        let distinct = book.subscriptions.count == subscriptions.count && book.oneTimePurchases.count == purchases.count
            && book.grantCount == grants.count
        guard distinct else { throw ByteReaderError.invalid("purchase book with a key listed twice", at: start) }
        return book
    }
}
