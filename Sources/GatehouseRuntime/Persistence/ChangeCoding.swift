import GatehouseBase
import GatehouseCore

/// A change batch as one record: the time, then each change as a tag byte and its fields
/// (docs/data-format.md, "Runtime records"). Tags are never reused.
enum ChangeCoding {
    private enum Tag: UInt8 {
        /// A config of layout version 1 (``ConfigCoding``): read, no longer written.
        case configReplacedVersion1 = 1
        case keyRotated = 2
        /// A profile of layout 1 (no install id, no attribute times): read, no longer written.
        case profileCreatedLayout1 = 3
        case customerUserIDAssigned = 4
        case tokenAssigned = 5
        case profileMerged = 6
        /// Attribute updates without times (each the batch's): read, no longer written.
        case attributesUpdatedUntimed = 7
        case profileDeleted = 8
        case subscriptionStored = 9
        case purchaseStored = 10
        case grantStored = 11
        case notificationSeen = 12
        case eventRecorded = 13
        case balanceChanged = 14
        case termGrantStored = 15
        case idempotencyRecorded = 16
        /// A config of layout version 2: read, no longer written.
        case configReplacedVersion2 = 17
        /// A profile of layout 2 (``ProfileCoding``).
        case profileCreated = 18
        /// Attribute updates, each with its time when the client gave one.
        case attributesUpdated = 19
        /// A config of layout version 3: read, no longer written.
        case configReplacedVersion3 = 20
        /// A config of layout version 4: read, no longer written.
        case configReplacedVersion4 = 21
        /// How attempts at deliveries ended (``OutboxCoding``).
        case deliveriesSettled = 22
        /// Events owed to a target again (`webhook.replay`).
        case deliveriesQueued = 23
        /// A config of layout version 5 (``ConfigCoding``).
        case configReplaced = 24
        /// A Checkout's buyer of a purchase not yet known (``WebCoding``).
        case pendingOwnerRecorded = 25
        /// The project's redemption link key (32 bytes).
        case linkKeyMade = 26
        /// A purchase key and its redemption link (``WebCoding``).
        case redemptionLinkStored = 27
        /// The web profile, the redeeming profile, the purchase key.
        case purchaseRedeemed = 28
        /// A Checkout Session id and its purchase key.
        case checkoutSessionRecorded = 29
        /// A Stripe payment's invoice (``WebCoding``).
        case stripePaymentLinked = 30
        /// A Stripe invoice's subscription.
        case stripeInvoiceLinked = 31
        /// A Stripe refund that leaves its purchase as it is.
        case stripeRefundRecorded = 32
    }

    static func write(_ batch: ProjectState.ChangeBatch, into writer: inout ByteWriter) {
        writer.writeVarInt(batch.atMs)
        writer.writeArray(batch.changes) { write($1, into: &$0) }
    }

    /// A `currency.transact`'s batch: the bytes ``write(_:into:)-(ChangeBatch,_)`` writes for
    /// `transact.batch`, without building that batch, its few dozen fields gathered on the stack
    /// (``StagedByteWriter``).
    static func write(_ transact: ProjectState.TransactChange, into writer: inout ByteWriter) {
        var staged = StagedByteWriter(adopting: &writer)
        staged.writeVarInt(transact.atMs)
        staged.writeVarUInt(2)
        writeBalanceChanged(transact.profile, transact.movement, into: &staged)
        writeIdempotencyRecorded(transact.key, transact.record, into: &staged)
        writer = staged.finish()
    }

    static func read(_ reader: inout ByteReader) throws(ByteReaderError) -> ProjectState.ChangeBatch {
        let atMs = try reader.readVarInt()
        let changes = try reader.readArray { reader throws(ByteReaderError) in try readChange(&reader, atMs: atMs) }
        return ProjectState.ChangeBatch(changes, atMs: atMs)
    }

    private static func write(_ change: ProjectState.Change, into writer: inout ByteWriter) {
        switch change {
        case .configReplaced(let config):
            writer.writeUInt8(Tag.configReplaced.rawValue)
            ConfigCoding.write(config, into: &writer)
        case .keyRotated(let kind, let digest):
            writer.writeUInt8(Tag.keyRotated.rawValue)
            writer.writeEnum(kind)
            DigestCoding.write(digest, into: &writer)
        case .profileCreated(let profile):
            writer.writeUInt8(Tag.profileCreated.rawValue)
            ProfileCoding.write(profile, into: &writer, stored: false)
        case .customerUserIDAssigned(let id, let customerUserID):
            writer.writeUInt8(Tag.customerUserIDAssigned.rawValue)
            ProfileCoding.writeID(id, into: &writer)
            writer.writeString(customerUserID)
        case .tokenAssigned(let id, let token):
            writer.writeUInt8(Tag.tokenAssigned.rawValue)
            ProfileCoding.writeID(id, into: &writer)
            ProfileCoding.writeToken(token, into: &writer)
        case .profileMerged(let source, let target):
            writer.writeUInt8(Tag.profileMerged.rawValue)
            ProfileCoding.writeID(source, into: &writer)
            ProfileCoding.writeID(target, into: &writer)
        case .attributesUpdated(let id, let updates):
            writer.writeUInt8(Tag.attributesUpdated.rawValue)
            ProfileCoding.writeID(id, into: &writer)
            writer.writeArray(updates) { writer, update in
                writer.writeString(update.key)
                writer.writeOptional(update.value) { $0.writeString($1) }
                writer.writeOptional(update.updatedMs) { $0.writeVarInt($1) }
            }
        case .profileDeleted(let id):
            writer.writeUInt8(Tag.profileDeleted.rawValue)
            ProfileCoding.writeID(id, into: &writer)
        case .subscriptionStored(let held):
            writer.writeUInt8(Tag.subscriptionStored.rawValue)
            PurchaseCoding.write(held, into: &writer)
        case .purchaseStored(let held):
            writer.writeUInt8(Tag.purchaseStored.rawValue)
            PurchaseCoding.write(held, into: &writer)
        case .grantStored(let id, let grant):
            writer.writeUInt8(Tag.grantStored.rawValue)
            ProfileCoding.writeID(id, into: &writer)
            PurchaseCoding.write(grant, into: &writer)
        case .notificationSeen(let store, let id):
            writer.writeUInt8(Tag.notificationSeen.rawValue)
            writer.writeString(store)
            writer.writeString(id)
        case .eventRecorded(let type, let id, let details):
            writer.writeUInt8(Tag.eventRecorded.rawValue)
            writer.writeEnum(type)
            writer.writeOptional(id) { ProfileCoding.writeID($1, into: &$0) }
            EventCoding.writeDetails(details, into: &writer)
        case .balanceChanged(let id, let movement):
            writeBalanceChanged(id, movement, into: &writer)
        case .termGrantStored(let grant):
            writer.writeUInt8(Tag.termGrantStored.rawValue)
            CurrencyCoding.write(grant, into: &writer)
        case .idempotencyRecorded(let key, let record):
            writeIdempotencyRecorded(key, record, into: &writer)
        case .deliveriesSettled(let outcomes):
            writer.writeUInt8(Tag.deliveriesSettled.rawValue)
            writer.writeArray(outcomes) { OutboxCoding.writeOutcome($1, into: &$0) }
        case .deliveriesQueued(let target, let keys):
            writer.writeUInt8(Tag.deliveriesQueued.rawValue)
            OutboxCoding.writeTarget(target, into: &writer)
            writer.writeArray(keys) { OutboxCoding.writeKey($1, into: &$0) }
        case .pendingOwnerRecorded(let key, let id):
            writer.writeUInt8(Tag.pendingOwnerRecorded.rawValue)
            WebCoding.writePendingOwner(key, id, into: &writer)
        case .linkKeyMade(let key):
            writer.writeUInt8(Tag.linkKeyMade.rawValue)
            writer.writeBytes(key)
        case .redemptionLinkStored(let key, let link):
            writer.writeUInt8(Tag.redemptionLinkStored.rawValue)
            WebCoding.writeKey(key, into: &writer)
            WebCoding.writeLink(link, into: &writer)
        case .purchaseRedeemed(let source, let target, let key):
            writer.writeUInt8(Tag.purchaseRedeemed.rawValue)
            ProfileCoding.writeID(source, into: &writer)
            ProfileCoding.writeID(target, into: &writer)
            WebCoding.writeKey(key, into: &writer)
        case .checkoutSessionRecorded(let session, let key):
            writer.writeUInt8(Tag.checkoutSessionRecorded.rawValue)
            writer.writeString(session)
            WebCoding.writeKey(key, into: &writer)
        case .stripePaymentLinked(let payment, let invoice):
            writer.writeUInt8(Tag.stripePaymentLinked.rawValue)
            writer.writeString(payment)
            writer.writeString(invoice)
        case .stripeInvoiceLinked(let invoice, let subscription):
            writer.writeUInt8(Tag.stripeInvoiceLinked.rawValue)
            writer.writeString(invoice)
            writer.writeString(subscription)
        case .stripeRefundRecorded(let transactionID, let fraction):
            writer.writeUInt8(Tag.stripeRefundRecorded.rawValue)
            WebCoding.writeRefund(transactionID, fraction, into: &writer)
        }
    }

    private static func writeBalanceChanged(_ id: ProfileID, _ movement: CurrencyMovement, into writer: inout some ByteWriting) {
        writer.writeUInt8(Tag.balanceChanged.rawValue)
        ProfileCoding.writeID(id, into: &writer)
        CurrencyCoding.write(movement, into: &writer)
    }

    private static func writeIdempotencyRecorded(_ key: String, _ record: IdempotencyRecord, into writer: inout some ByteWriting) {
        writer.writeUInt8(Tag.idempotencyRecorded.rawValue)
        writer.writeString(key)
        CurrencyCoding.write(record, into: &writer)
    }

    /// `atMs`: the batch's time, which stands for the times a record of an older layout lacks.
    private static func readChange(_ reader: inout ByteReader, atMs: Int64) throws(ByteReaderError) -> ProjectState.Change {
        let start = reader.offset
        guard let tag = Tag(rawValue: try reader.readUInt8()) else { throw ByteReaderError.invalid("change tag", at: start) }
        switch tag {
        case .configReplacedVersion1:
            return .configReplaced(try ConfigCoding.read(&reader, version: 1))
        case .configReplacedVersion2:
            return .configReplaced(try ConfigCoding.read(&reader, version: 2))
        case .configReplacedVersion3:
            return .configReplaced(try ConfigCoding.read(&reader, version: 3))
        case .configReplacedVersion4:
            return .configReplaced(try ConfigCoding.read(&reader, version: 4))
        case .configReplaced:
            return .configReplaced(try ConfigCoding.read(&reader, version: ConfigCoding.version))
        case .keyRotated:
            return .keyRotated(try reader.readEnum(KeyKind.self), try DigestCoding.read(&reader))
        case .profileCreatedLayout1:
            return .profileCreated(try ProfileCoding.readLayout1(&reader, partCursors: false, attributesMs: atMs))
        case .profileCreated:
            return .profileCreated(try ProfileCoding.read(&reader, stored: false))
        case .customerUserIDAssigned:
            return .customerUserIDAssigned(try ProfileCoding.readID(&reader), try reader.readString())
        case .tokenAssigned:
            return .tokenAssigned(try ProfileCoding.readID(&reader), try ProfileCoding.readToken(&reader))
        case .profileMerged:
            return .profileMerged(from: try ProfileCoding.readID(&reader), into: try ProfileCoding.readID(&reader))
        case .attributesUpdatedUntimed:
            return .attributesUpdated(try ProfileCoding.readID(&reader), try readAttributeUpdates(&reader, timed: false))
        case .attributesUpdated:
            return .attributesUpdated(try ProfileCoding.readID(&reader), try readAttributeUpdates(&reader, timed: true))
        case .profileDeleted:
            return .profileDeleted(try ProfileCoding.readID(&reader))
        case .subscriptionStored:
            return .subscriptionStored(try PurchaseCoding.readSubscription(&reader))
        case .purchaseStored:
            return .purchaseStored(try PurchaseCoding.readPurchase(&reader))
        case .grantStored:
            return .grantStored(try ProfileCoding.readID(&reader), try PurchaseCoding.readGrant(&reader))
        case .notificationSeen:
            return .notificationSeen(store: try reader.readString(), id: try reader.readString())
        case .eventRecorded:
            let type = try reader.readEnum(EventType.self)
            let id = try reader.readOptional { reader throws(ByteReaderError) in try ProfileCoding.readID(&reader) }
            return .eventRecorded(type, id, try EventCoding.readDetails(&reader))
        case .balanceChanged:
            return .balanceChanged(try ProfileCoding.readID(&reader), try CurrencyCoding.readMovement(&reader))
        case .termGrantStored:
            return .termGrantStored(try CurrencyCoding.readGrant(&reader))
        case .idempotencyRecorded:
            return .idempotencyRecorded(try reader.readString(), try CurrencyCoding.readRecord(&reader))
        case .deliveriesSettled:
            return .deliveriesSettled(try reader.readArray { reader throws(ByteReaderError) in try OutboxCoding.readOutcome(&reader) })
        case .deliveriesQueued:
            let target = try OutboxCoding.readTarget(&reader)
            return .deliveriesQueued(target, try reader.readArray { reader throws(ByteReaderError) in try OutboxCoding.readKey(&reader) })
        case .pendingOwnerRecorded:
            let (key, id) = try WebCoding.readPendingOwner(&reader)
            return .pendingOwnerRecorded(key, id)
        case .linkKeyMade:
            let key = try reader.readBytes()
            guard key.count == RedemptionToken.keyLength else { throw ByteReaderError.invalid("link key length", at: start) }
            return .linkKeyMade(key)
        case .redemptionLinkStored:
            return .redemptionLinkStored(try WebCoding.readKey(&reader), try WebCoding.readLink(&reader))
        case .purchaseRedeemed:
            return .purchaseRedeemed(from: try ProfileCoding.readID(&reader), into: try ProfileCoding.readID(&reader),
                                     purchase: try WebCoding.readKey(&reader))
        case .checkoutSessionRecorded:
            return .checkoutSessionRecorded(try reader.readString(), try WebCoding.readKey(&reader))
        case .stripePaymentLinked:
            return .stripePaymentLinked(payment: try reader.readString(), invoice: try reader.readString())
        case .stripeInvoiceLinked:
            return .stripeInvoiceLinked(invoice: try reader.readString(), subscription: try reader.readString())
        case .stripeRefundRecorded:
            let (transactionID, fraction) = try WebCoding.readRefund(&reader)
            return .stripeRefundRecorded(transactionID: transactionID, fraction: fraction)
        }
    }
}

extension ChangeCoding {
    /// Key, value (absent deletes), and with `timed` the time (absent: the batch's).
    private static func readAttributeUpdates(_ reader: inout ByteReader, timed: Bool) throws(ByteReaderError)
        -> [ProjectState.AttributeUpdate]
    {
        try reader.readArray { reader throws(ByteReaderError) in
            let key = try reader.readString()
            let value = try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() }
            let updatedMs = timed ? try reader.readOptional { reader throws(ByteReaderError) in try reader.readVarInt() } : nil
            return ProjectState.AttributeUpdate(key: key, value: value, updatedMs: updatedMs)
        }
    }
}

/// Profiles, their ids and tokens in binary: ids as 19 raw bytes, tokens and install ids as 16.
enum ProfileCoding {
    /// The 19 bytes of ``ProfileID/bytes`` (high and low big-endian, then the 3 tag bytes),
    /// written a field at a time: a million profiles' ids, and every event's, allocate nothing.
    static func writeID(_ id: ProfileID, into writer: inout some ByteWriting) {
        writer.writeUInt64(id.high.byteSwapped)
        writer.writeUInt64(id.low.byteSwapped)
        writer.writeUInt8(UInt8(truncatingIfNeeded: id.tag >> 16))
        writer.writeUInt16(UInt16(truncatingIfNeeded: id.tag).byteSwapped)
    }

    static func readID(_ reader: inout ByteReader) throws(ByteReaderError) -> ProfileID {
        let high = try reader.readUInt64().byteSwapped
        let low = try reader.readUInt64().byteSwapped
        let tag = UInt32(try reader.readUInt8()) << 16 | UInt32(try reader.readUInt16().byteSwapped)
        return ProfileID(high: high, low: low, tag: tag)
    }

    static func writeToken(_ token: AppAccountToken, into writer: inout ByteWriter) {
        writer.writeUInt64(token.high)
        writer.writeUInt64(token.low)
    }

    static func readToken(_ reader: inout ByteReader) throws(ByteReaderError) -> AppAccountToken {
        AppAccountToken(high: try reader.readUInt64(), low: try reader.readUInt64())
    }

    static func writeInstallID(_ installID: InstallID, into writer: inout ByteWriter) {
        writer.writeUInt64(installID.high)
        writer.writeUInt64(installID.low)
    }

    static func readInstallID(_ reader: inout ByteReader) throws(ByteReaderError) -> InstallID {
        InstallID(high: try reader.readUInt64(), low: try reader.readUInt64())
    }

    /// A profile in layout 2 (docs/data-format.md, "Profile"). A record's profile (a new one)
    /// carries one cursor; a snapshot's (`stored`, state version 5) the cursor of each part `sync`
    /// reports (identity, entitlements, currencies, purchases), then its attributes cursor.
    static func write(_ profile: Profile, into writer: inout ByteWriter, stored: Bool) {
        writeID(profile.id, into: &writer)
        writer.writeOptional(profile.customerUserID) { $0.writeString($1) }
        writeToken(profile.token, into: &writer)
        writer.writeOptional(profile.installID) { writeInstallID($1, into: &$0) }
        writer.writeArray(profile.aliases) { writeID($1, into: &$0) }
        writer.writeArray(profile.mergedInstallIDs) { writeInstallID($1, into: &$0) }
        let attributes = profile.attributes
        // Most profiles have none or one: nothing to sort, so no array is made.
        if attributes.count < 2 {
            writer.writeArray(attributes) { writeAttribute($1, into: &$0) }
        } else {
            writer.writeArray(attributes.sorted { $0.key < $1.key }) { writeAttribute($1, into: &$0) }
        }
        writer.writeVarInt(profile.createdMs)
        writer.writeVarInt(profile.lastSeenMs)
        guard stored else {
            writer.writeVarUInt(profile.cursor)
            return
        }
        let cursors = profile.cursors
        writer.writeVarUInt(cursors.identity)
        writer.writeVarUInt(cursors.entitlements)
        writer.writeVarUInt(cursors.currencies)
        writer.writeVarUInt(cursors.purchases)
        writer.writeVarUInt(profile.attributesCursor)
    }

    private static func writeAttribute(_ entry: (key: String, value: ProfileAttribute), into writer: inout ByteWriter) {
        writer.writeString(entry.key)
        writer.writeString(entry.value.value)
        writer.writeVarInt(entry.value.updatedMs)
    }

    static func read(_ reader: inout ByteReader, stored: Bool) throws(ByteReaderError) -> Profile {
        let id = try readID(&reader)
        let customerUserID = try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() }
        let token = try readToken(&reader)
        let installID = try reader.readOptional { reader throws(ByteReaderError) in try readInstallID(&reader) }
        let aliases = try reader.readArray { reader throws(ByteReaderError) in try readID(&reader) }
        let mergedInstallIDs = try reader.readArray { reader throws(ByteReaderError) in try readInstallID(&reader) }
        let attributes = try readAttributes(&reader) { reader throws(ByteReaderError) in
            ProfileAttribute(value: try reader.readString(), updatedMs: try reader.readVarInt())
        }
        var profile = Profile(id: id, customerUserID: customerUserID, token: token, installID: installID, aliases: aliases,
                              mergedInstallIDs: mergedInstallIDs, attributes: attributes, createdMs: try reader.readVarInt(),
                              lastSeenMs: try reader.readVarInt(), cursor: try reader.readVarUInt())
        if stored {
            profile.cursors = SyncCursors(identity: profile.cursor, entitlements: try reader.readVarUInt(),
                                          currencies: try reader.readVarUInt(), purchases: try reader.readVarUInt())
            profile.attributesCursor = try reader.readVarUInt()
        }
        return profile
    }

    /// A profile in layout 1, as change tag 3 and state versions 1–4 hold it: no install ids,
    /// attributes without times, and (a snapshot's, with `partCursors`, state versions 2–4) no
    /// attributes cursor. Its attributes take `attributesMs`, the time of the record's batch; in
    /// a snapshot (`nil`) the profile's last-seen time, the latest any of them can have been set.
    static func readLayout1(_ reader: inout ByteReader, partCursors: Bool, attributesMs: Int64?) throws(ByteReaderError)
        -> Profile
    {
        let id = try readID(&reader)
        let customerUserID = try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() }
        let token = try readToken(&reader)
        let aliases = try reader.readArray { reader throws(ByteReaderError) in try readID(&reader) }
        let values = try readAttributes(&reader) { reader throws(ByteReaderError) in try reader.readString() }
        let createdMs = try reader.readVarInt()
        let lastSeenMs = try reader.readVarInt()
        let setMs = attributesMs ?? lastSeenMs
        var profile = Profile(id: id, customerUserID: customerUserID, token: token, aliases: aliases,
                              attributes: values.mapValues { ProfileAttribute(value: $0, updatedMs: setMs) }, createdMs: createdMs,
                              lastSeenMs: lastSeenMs, cursor: try reader.readVarUInt())
        if partCursors {
            profile.cursors = SyncCursors(identity: profile.cursor, entitlements: try reader.readVarUInt(),
                                          currencies: try reader.readVarUInt(), purchases: try reader.readVarUInt())
        }
        return profile
    }

    /// An attributes array: each key, then what `value` reads.
    private static func readAttributes<Value>(
        _ reader: inout ByteReader, _ value: (inout ByteReader) throws(ByteReaderError) -> Value
    ) throws(ByteReaderError) -> [String: Value] {
        let count = try reader.readCount(maximum: reader.remaining)
        var attributes: [String: Value] = [:]
        if count > 0 { attributes.reserveCapacity(count) }
        for _ in 0..<count { attributes[try reader.readString()] = try value(&reader) }
        return attributes
    }
}

/// Feed events in binary. State version 1 stored a profile id on every event; version 2 stores
/// it as optional (an unowned purchase's events have none). Version 3 stores the log compactly
/// (``EventLogCoding``); a `project changed` record's events (``writeDetails(_:into:)``) keep
/// the packed form.
enum EventCoding {
    /// Version 2: one event with its id, type name and packed details (tests write old bodies).
    static func write(_ event: Event, into writer: inout ByteWriter) {
        writer.writeString(event.id)
        writer.writeVarUInt(event.cursor)
        writer.writeEnum(event.type)
        writer.writeOptional(event.profileID) { ProfileCoding.writeID($1, into: &$0) }
        writer.writeOptional(event.customerUserID) { $0.writeString($1) }
        writer.writeVarInt(event.atMs)
        writer.writeRaw(event.packedDetails)
    }

    /// The id is written out, but it is the cursor's and a number: one that is not is damage.
    static func read(_ reader: inout ByteReader, stateVersion: UInt64) throws(ByteReaderError) -> Event {
        let idOffset = reader.offset
        let id = try reader.readString()
        let cursor = try reader.readVarUInt()
        guard let index = Event.index(inID: id, cursor: cursor) else { throw ByteReaderError.invalid("event id \(id)", at: idOffset) }
        let type = try reader.readEnum(EventType.self)
        let profileID: ProfileID? =
            stateVersion == 1
            ? try ProfileCoding.readID(&reader)
            : try reader.readOptional { reader throws(ByteReaderError) in try ProfileCoding.readID(&reader) }
        let customerUserID = try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() }
        let atMs = try reader.readVarInt()
        let start = reader.offset
        try EventDetailCoding.skip(&reader)
        return Event(cursor: cursor, index: index, type: type, profileID: profileID, customerUserID: customerUserID, atMs: atMs,
                     packedDetails: reader.bytes(in: start..<reader.offset))
    }

    /// A version 1 or 2 snapshot's feed (an array of events), straight into a log: one event's
    /// details at a time, never the whole feed as separate arrays. Events out of order are damage.
    static func readLog(_ reader: inout ByteReader, stateVersion: UInt64) throws(ByteReaderError) -> EventLog {
        let start = reader.offset
        let count = try reader.readCount()
        guard count <= reader.remaining else { throw ByteReaderError.truncated(at: start) }
        var log = EventLog()
        log.reserveCapacity(count)
        var previous: (UInt64, UInt32)?
        for _ in 0..<count {
            let eventOffset = reader.offset
            let event = try read(&reader, stateVersion: stateVersion)
            if let previous, previous >= (event.cursor, event.index) {
                throw ByteReaderError.invalid("event \(event.id) out of order", at: eventOffset)
            }
            previous = (event.cursor, event.index)
            log.append(event)
        }
        return log
    }

    static func writeDetails(_ details: [EventDetail], into writer: inout ByteWriter) {
        EventDetailCoding.write(details, into: &writer)
    }

    static func readDetails(_ reader: inout ByteReader) throws(ByteReaderError) -> [EventDetail] {
        try EventDetailCoding.read(&reader)
    }
}

/// The events section of a state version 3 body (docs/data-format.md, "Events (state version
/// 3)"): the count, every event's details end to end as the log holds them, then each event's
/// fields, with its cursor and time as differences from the event before it and its profile id
/// and customer user id written only when they differ from that event's. The id
/// `evt_<cursor>_<index>` is not written: it is derived.
enum EventLogCoding {
    /// Bits of an event's flags byte; the other bits are `0`.
    enum Flag {
        static let profileMask: UInt8 = 0b0011
        static let profileWritten: UInt8 = 0b0001
        static let profileAsBefore: UInt8 = 0b0010
        static let customerUserIDMask: UInt8 = 0b1100
        static let customerUserIDWritten: UInt8 = 0b0100
        static let customerUserIDAsBefore: UInt8 = 0b1000
    }

    /// An event type's stored code. Codes never change meaning: a new type takes the next one.
    static func code(of type: EventType) -> UInt8 {
        switch type {
        case .initialPurchase: 1
        case .renewal: 2
        case .productChange: 3
        case .cancellation: 4
        case .uncancellation: 5
        case .billingIssue: 6
        case .expiration: 7
        case .nonRenewingPurchase: 8
        case .refund: 9
        case .refundReversed: 10
        case .transfer: 11
        case .subscriberAlias: 12
        case .purchaseRedeemed: 13
        case .virtualCurrencyTransaction: 14
        case .promotionalGrant: 15
        case .promotionalRevoke: 16
        case .test: 17
        }
    }

    /// Code to type (index 0 and unknown codes: `nil`), from ``code(of:)``, the one table.
    static let types: [EventType?] = {
        var table = [EventType?](repeating: nil, count: 256)
        for type in EventType.allCases { table[Int(code(of: type))] = type }
        return table
    }()

    static func write(_ log: EventLog, into writer: inout ByteWriter) {
        writer.writeVarUInt(UInt64(log.count))
        writer.writeVarUInt(UInt64(log.storedDetailsCount))
        log.forEachStoredDetailsRun { writer.writeRaw($0) }
        var cursor: UInt64 = 0
        var atMs: Int64 = 0
        var profileID: ProfileID?
        var customerUserID: String?
        var first = true
        log.forEachStored { event in
            var flags: UInt8 = 0
            let sameProfile = !first && event.profileID != nil && event.profileID == profileID
            let sameCustomer = !first && event.customerUserID != nil && event.customerUserID == customerUserID
            if event.profileID != nil { flags |= sameProfile ? Flag.profileAsBefore : Flag.profileWritten }
            if event.customerUserID != nil { flags |= sameCustomer ? Flag.customerUserIDAsBefore : Flag.customerUserIDWritten }
            writer.writeUInt8(flags)
            writer.writeUInt8(code(of: event.type))
            writer.writeVarUInt(event.cursor &- cursor)
            writer.writeVarUInt(UInt64(event.index))
            writer.writeVarInt(event.atMs &- atMs)
            if let id = event.profileID, !sameProfile { ProfileCoding.writeID(id, into: &writer) }
            if let name = event.customerUserID, !sameCustomer { writer.writeString(name) }
            writer.writeVarUInt(UInt64(event.detailsCount))
            cursor = event.cursor
            atMs = event.atMs
            profileID = event.profileID
            customerUserID = event.customerUserID
            first = false
        }
    }

    /// Everything is checked: a flag, code, delta or index no writer makes, details that are
    /// not well formed or not as long as said, events out of order. The log's own loader checks
    /// the details and the order.
    static func read(_ reader: inout ByteReader) throws(ByteReaderError) -> EventLog {
        let countOffset = reader.offset
        let count = try reader.readCount()
        let detailsCount = try reader.readCount()
        guard detailsCount <= reader.remaining, count <= reader.remaining - detailsCount, count <= detailsCount else {
            throw ByteReaderError.truncated(at: countOffset)
        }
        let detailsBase = reader.offset
        var loader = EventLog.Loader(details: try reader.readRaw(detailsCount), count: count, offset: detailsBase)
        var cursor: UInt64 = 0
        var atMs: Int64 = 0
        var profileID: ProfileID?
        var customerUserID: String?
        for _ in 0..<count {
            let start = reader.offset
            let flags = try reader.readUInt8()
            guard flags & ~(Flag.profileMask | Flag.customerUserIDMask) == 0, flags & Flag.profileMask != Flag.profileMask,
                flags & Flag.customerUserIDMask != Flag.customerUserIDMask
            else { throw ByteReaderError.invalid("event flags \(flags)", at: start) }
            let codeOffset = reader.offset
            guard let type = types[Int(try reader.readUInt8())] else { throw ByteReaderError.invalid("event type code", at: codeOffset) }
            let deltaOffset = reader.offset
            let (nextCursor, cursorOverflow) = cursor.addingReportingOverflow(try reader.readVarUInt())
            let indexOffset = reader.offset
            guard let index = UInt32(exactly: try reader.readVarUInt()) else { throw ByteReaderError.invalid("event index", at: indexOffset) }
            // Times may go back and need not be near each other: their differences wrap, so any
            // two times are one difference apart and every time reads back exactly.
            let nextAtMs = atMs &+ (try reader.readVarInt())
            guard !cursorOverflow else { throw ByteReaderError.invalid("event cursor delta", at: deltaOffset) }
            switch flags & Flag.profileMask {
            case Flag.profileWritten: profileID = try ProfileCoding.readID(&reader)
            case Flag.profileAsBefore:
                guard profileID != nil else { throw ByteReaderError.invalid("event profile as before, with none before", at: start) }
            default: profileID = nil
            }
            switch flags & Flag.customerUserIDMask {
            case Flag.customerUserIDWritten: customerUserID = try reader.readString()
            case Flag.customerUserIDAsBefore:
                guard customerUserID != nil else { throw ByteReaderError.invalid("event customer user id as before, with none before", at: start) }
            default: customerUserID = nil
            }
            let length = try reader.readCount()
            cursor = nextCursor
            atMs = nextAtMs
            let event = EventLog.StoredEvent(cursor: cursor, index: index, type: type, profileID: profileID,
                                             customerUserID: customerUserID, atMs: atMs, detailsCount: length)
            try loader.append(event, at: start)
        }
        return try loader.finish()
    }
}
