/// One app user (DESIGN.md, "Profiles and identity"): anonymous until it has a customer user
/// id, always with an app account token, possibly with the install id it was created with and
/// the ids of profiles merged into it.
public struct Profile: Sendable, Equatable {
    public let id: ProfileID
    /// The app's own id for the user, 1–255 characters after trimming; never changes once set.
    public var customerUserID: String?
    public var token: AppAccountToken
    /// The install id the profile was created with, if any; it never changes.
    public let installID: InstallID?
    /// Ids of profiles merged into this one (under `login: alias`); they resolve to it forever.
    public var aliases: [ProfileID]
    /// The install ids of the profiles merged into this one (theirs and what they had absorbed),
    /// in install id order: they resolve to it as its aliases do. The profile document does not
    /// show them.
    public var mergedInstallIDs: [InstallID]
    /// The tokens of the profiles merged into this one, in token order: they resolve to it
    /// until it takes one as its own. The ``ProfileDirectory`` keeps them (a snapshot stores them
    /// beside the profiles, not in them); the profile document does not show them.
    public internal(set) var mergedTokens: [AppAccountToken] = []
    /// Keys of 1–40 characters, string values of at most 500, at most 50 keys; each with the
    /// time it was set, which an older update does not win against.
    public var attributes: [String: ProfileAttribute]
    public let createdMs: Int64
    /// The last time the app changed something about this profile.
    public var lastSeenMs: Int64
    /// The project sequence number of the last change of each part `sync` reports.
    public var cursors: SyncCursors
    /// The project sequence number of the last batch that changed the attributes (0: none
    /// known). `sync` does not report attributes (SDKs cannot read them); a document the secret
    /// key reads does show them.
    public var attributesCursor: UInt64

    /// The project sequence number of the last change `sync` reports for this profile.
    public var cursor: UInt64 {
        get { cursors.latest }
        set { cursors = SyncCursors(all: newValue) }
    }

    public init(
        id: ProfileID, customerUserID: String?, token: AppAccountToken, installID: InstallID? = nil, aliases: [ProfileID] = [],
        mergedInstallIDs: [InstallID] = [], attributes: [String: ProfileAttribute] = [:], createdMs: Int64, lastSeenMs: Int64,
        cursor: UInt64, attributesCursor: UInt64 = 0
    ) {
        self.id = id
        self.customerUserID = customerUserID
        self.token = token
        self.installID = installID
        self.aliases = aliases
        self.mergedInstallIDs = mergedInstallIDs
        self.attributes = attributes
        self.createdMs = createdMs
        self.lastSeenMs = lastSeenMs
        self.cursors = SyncCursors(all: cursor)
        self.attributesCursor = attributesCursor
    }

    public var isAnonymous: Bool { customerUserID == nil }

    /// The sequence number of the last change of anything the profile's documents show, its
    /// attributes included (which `sync` does not report).
    public var documentCursor: UInt64 { max(cursors.latest, attributesCursor) }

    /// The attributes without their times, as the line protocol shows them.
    public var attributeValues: [String: String] { attributes.mapValues(\.value) }
}

/// One attribute of a profile: its value and when it was set (the client's `updated_at_ms`, or
/// the time of the request that set it).
public struct ProfileAttribute: Sendable, Equatable {
    public var value: String
    public var updatedMs: Int64

    public init(value: String, updatedMs: Int64) {
        self.value = value
        self.updatedMs = updatedMs
    }
}

/// What `sync` names in `changed` (PROTOCOL.md, "Sync and push"), in its order.
public enum SyncPart: String, Sendable, CaseIterable {
    case identity
    case entitlements
    case currencies
    case purchases
    case offerings
}

/// Per part of a profile that `sync` reports, the sequence number of its last change.
/// (`offerings` is the project's config cursor.)
public struct SyncCursors: Sendable, Equatable {
    public var identity: UInt64
    public var entitlements: UInt64
    public var currencies: UInt64
    public var purchases: UInt64

    public init(identity: UInt64, entitlements: UInt64, currencies: UInt64, purchases: UInt64) {
        self.identity = identity
        self.entitlements = entitlements
        self.currencies = currencies
        self.purchases = purchases
    }

    public init(all cursor: UInt64) {
        self.init(identity: cursor, entitlements: cursor, currencies: cursor, purchases: cursor)
    }

    public var latest: UInt64 { max(identity, entitlements, currencies, purchases) }

    /// The parts changed after `cursor`, in ``SyncPart`` order (without `offerings`).
    public func changed(after cursor: UInt64) -> [SyncPart] {
        var parts: [SyncPart] = []
        if identity > cursor { parts.append(.identity) }
        if entitlements > cursor { parts.append(.entitlements) }
        if currencies > cursor { parts.append(.currencies) }
        if purchases > cursor { parts.append(.purchases) }
        return parts
    }

    /// The parts a change moves (a bit each: marking one allocates nothing).
    struct Parts: OptionSet {
        let rawValue: UInt8
        static let identity = Parts(rawValue: 1 << 0)
        static let entitlements = Parts(rawValue: 1 << 1)
        static let currencies = Parts(rawValue: 1 << 2)
        static let purchases = Parts(rawValue: 1 << 3)
    }

    mutating func mark(_ parts: Parts, at sequence: UInt64) {
        if parts.contains(.identity) { identity = sequence }
        if parts.contains(.entitlements) { entitlements = sequence }
        if parts.contains(.currencies) { currencies = sequence }
        if parts.contains(.purchases) { purchases = sequence }
    }
}

/// The limits on profile data (DESIGN.md).
public enum ProfileLimits {
    public static let customerUserIDCharacters: ClosedRange<Int> = 1...255
    public static let attributeKeyCharacters: ClosedRange<Int> = 1...40
    public static let attributeValueCharactersMax = 500
    public static let attributesPerProfileMax = 50
}

/// The customer-facing events of the feed (PROTOCOL.md, "The event feed").
public enum EventType: String, Sendable, CaseIterable {
    case initialPurchase = "INITIAL_PURCHASE"
    case renewal = "RENEWAL"
    case productChange = "PRODUCT_CHANGE"
    case cancellation = "CANCELLATION"
    case uncancellation = "UNCANCELLATION"
    case billingIssue = "BILLING_ISSUE"
    case expiration = "EXPIRATION"
    case nonRenewingPurchase = "NON_RENEWING_PURCHASE"
    case refund = "REFUND"
    case refundReversed = "REFUND_REVERSED"
    case transfer = "TRANSFER"
    case subscriberAlias = "SUBSCRIBER_ALIAS"
    case purchaseRedeemed = "PURCHASE_REDEEMED"
    case virtualCurrencyTransaction = "VIRTUAL_CURRENCY_TRANSACTION"
    case promotionalGrant = "PROMOTIONAL_GRANT"
    case promotionalRevoke = "PROMOTIONAL_REVOKE"
    /// `webhook.test`'s event: delivered only to the webhook it names, and not listed by `events`.
    case test = "TEST"
}

/// One event of the project's feed. Its id is stable: consumers deduplicate on it.
public struct Event: Sendable, Equatable {
    /// The project sequence number of the change that made it.
    public let cursor: UInt64
    /// Its place among the events of that change, from 0.
    public let index: UInt32
    public let type: EventType
    /// `nil` for a purchase no profile owns yet (held under its token until one claims it).
    public let profileID: ProfileID?
    public let customerUserID: String?
    public let atMs: Int64
    /// The type-specific fields in ``EventDetailCoding``'s binary form: one small array per
    /// event, where a list of detail values would cost an allocation per string.
    public let packedDetails: [UInt8]

    /// `evt_<sequence>_<index within that change>`: unique in the project, the same on every read.
    public var id: String { Self.id(cursor: cursor, index: index) }

    /// Type-specific fields, in a stable order (for `SUBSCRIBER_ALIAS`: `merged_from`).
    public var details: [EventDetail] { EventDetailCoding.unpack(packedDetails) }

    public init(cursor: UInt64, index: UInt32, type: EventType, profileID: ProfileID?, customerUserID: String?, atMs: Int64,
                details: [EventDetail])
    {
        self.init(cursor: cursor, index: index, type: type, profileID: profileID, customerUserID: customerUserID, atMs: atMs,
                  packedDetails: EventDetailCoding.pack(details))
    }

    /// With details already in ``EventDetailCoding``'s form (read from a snapshot or the feed).
    public init(cursor: UInt64, index: UInt32, type: EventType, profileID: ProfileID?, customerUserID: String?, atMs: Int64,
                packedDetails: [UInt8])
    {
        self.cursor = cursor
        self.index = index
        self.type = type
        self.profileID = profileID
        self.customerUserID = customerUserID
        self.atMs = atMs
        self.packedDetails = packedDetails
    }

    /// An event named by its id, which must be `cursor`'s (tests spell events out this way).
    public init(id: String, cursor: UInt64, type: EventType, profileID: ProfileID?, customerUserID: String?, atMs: Int64,
                details: [EventDetail])
    {
        guard let index = Self.index(inID: id, cursor: cursor) else { preconditionFailure("\(id) is not an id of cursor \(cursor)") }
        self.init(cursor: cursor, index: index, type: type, profileID: profileID, customerUserID: customerUserID, atMs: atMs,
                  details: details)
    }

    public static func id(cursor: UInt64, index: UInt32) -> String {
        "evt_\(cursor)_\(index)"
    }

    /// The index in an id as ``id(cursor:index:)`` writes it for `cursor`; `nil` for any other
    /// text (another cursor, a sign, a leading zero, an index past `UInt32`), so an id read back
    /// is written again byte for byte.
    public static func index(inID id: String, cursor: UInt64) -> UInt32? {
        var text = Substring(id).utf8
        guard text.starts(with: "evt_".utf8) else { return nil }
        text.removeFirst(4)
        guard decimal(&text) == cursor, text.popFirst() == UInt8(ascii: "_"), let index = decimal(&text), text.isEmpty else {
            return nil
        }
        return UInt32(exactly: index)
    }

    /// A decimal number in its one spelling (digits only, no leading zero) from the front of
    /// `text`; `nil` when there is none or it overflows.
    private static func decimal(_ text: inout Substring.UTF8View) -> UInt64? {
        var value: UInt64 = 0
        var digits = 0
        while let byte = text.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
            guard digits == 0 || value != 0 else { return nil }
            let (tens, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (sum, carried) = tens.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflowed, !carried else { return nil }
            value = sum
            digits += 1
            text.removeFirst()
        }
        return digits > 0 ? value : nil
    }
}

/// A named extra field of an event.
public struct EventDetail: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
        case string(String)
        case int(Int64)
        case profiles([ProfileID])
        case strings([String])
        case bool(Bool)
    }

    public let name: String
    public let value: Value

    public init(_ name: String, _ value: Value) {
        self.name = name
        self.value = value
    }
}
