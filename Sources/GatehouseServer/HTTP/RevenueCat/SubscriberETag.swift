import GatehouseBase
import GatehouseCore
import GatehouseRuntime

/// The `X-RevenueCat-ETag` of a subscriber object (HTTP.md, "ETag"). Opaque to the SDK, it
/// carries what decides whether the body would still be the same, so that a revalidation is
/// answered on the loop from the project's published cursors, without entering its actor:
///
/// - the profile and its document cursor (the last change of anything its body shows, the
///   attributes included, which the secret key's body shows and which move `last_seen`);
/// - the config's cursor (entitlement and product definitions shape the body);
/// - the first moment the body changes by time alone, when a purchase or grant in it expires or
///   enters or leaves grace: the SDK judges `expires_date` against the `request_date` of the
///   body it holds, so a 304 after that moment would keep a lapsed entitlement active;
/// - which key asked (the secret key's body has attributes) and a hash of the app user id the
///   path named, so an ETag is only ever good for the request it was made for.
///
/// `v1.<profile id>.<document cursor>.<config cursor>.<changes at ms, or ->.<p|s>.<id hash>`, numbers in hex.
struct SubscriberETag: Equatable, Sendable {
    static let header = "X-RevenueCat-ETag"

    var profile: ProfileID
    var documentCursor: UInt64
    var configCursor: UInt64
    var changesAtMs: Int64?
    var secret: Bool
    var requested: UInt64

    init(profile: ProfileID, documentCursor: UInt64, configCursor: UInt64, changesAtMs: Int64?, secret: Bool, requested: UInt64) {
        self.profile = profile
        self.documentCursor = documentCursor
        self.configCursor = configCursor
        self.changesAtMs = changesAtMs
        self.secret = secret
        self.requested = requested
    }

    /// The ETag of the body built from `view`, for the app user id `requested` names.
    init(_ view: ProfileView, requested: String, secret: Bool, board: SyncBoard) {
        self.init(
            profile: view.profile.id, documentCursor: view.profile.documentCursor, configCursor: board.configCursor,
            changesAtMs: Self.changesAt(view, after: view.nowMs), secret: secret, requested: Self.hash(requested)
        )
    }

    /// The first moment after `nowMs` at which something the body shows changes by time alone.
    static func changesAt(_ view: ProfileView, after nowMs: Int64) -> Int64? {
        var first: Int64?
        func consider(_ moment: Int64?) {
            guard let moment, moment > nowMs else { return }
            first = min(first ?? moment, moment)
        }
        // The end of the term, or of grace in grace: when the timer would expire it.
        for subscription in view.holdings.subscriptions { consider(subscription.nextDeadlineMs) }
        for entitlement in view.holdings.entitlements {
            consider(entitlement.expiresMs)
            consider(entitlement.graceExpiresMs)
        }
        // A grant shows as a subscription of its own, also when another source lasts longer.
        for grant in view.grants where !grant.revoked { consider(grant.expiresMs) }
        return first
    }

    /// Whether a body with this ETag is still the one `requested` would get from `board`'s
    /// project at `nowMs`, for the key kind that asks.
    func holds(for requested: String, secret: Bool, board: SyncBoard, nowMs: Int64) -> Bool {
        guard self.secret == secret, self.requested == Self.hash(requested), changesAtMs.map({ nowMs < $0 }) ?? true,
            board.configCursor == configCursor
        else { return false }
        return board.documentCursor(of: profile) == documentCursor
    }

    var text: String {
        let changes = changesAtMs.map { String($0, radix: 16) } ?? "-"
        return "v1.\(profile).\(String(documentCursor, radix: 16)).\(String(configCursor, radix: 16)).\(changes)."
            + "\(secret ? "s" : "p").\(String(requested, radix: 16))"
    }

    /// Reads the ETag's UTF-8 in place (every revalidation on the loop parses one): no
    /// substring, no allocation.
    init?(parsing text: String) {
        var text = text
        guard let etag = text.withUTF8({ Self.parse(UnsafeRawBufferPointer($0)) }) else { return nil }
        self = etag
    }

    private static func parse(_ bytes: UnsafeRawBufferPointer) -> SubscriberETag? {
        var fields: [Range<Int>] = []
        fields.reserveCapacity(7)
        var start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: ".") {
            fields.append(start..<index)
            start = index + 1
        }
        guard fields.count == 7, fields[0].count == 2, bytes[0] == UInt8(ascii: "v"), bytes[1] == UInt8(ascii: "1"),
            let profile = ProfileID(utf8: UnsafeRawBufferPointer(rebasing: bytes[fields[1]])),
            let documentCursor = hex(bytes, fields[2]), let configCursor = hex(bytes, fields[3]),
            fields[5].count == 1, let requested = hex(bytes, fields[6])
        else { return nil }
        let kind = bytes[fields[5].lowerBound]
        guard kind == UInt8(ascii: "s") || kind == UInt8(ascii: "p") else { return nil }
        let changesAtMs: Int64?
        if fields[4].count == 1, bytes[fields[4].lowerBound] == UInt8(ascii: "-") {
            changesAtMs = nil
        } else {
            guard let moment = hex(bytes, fields[4]), let signed = Int64(exactly: moment) else { return nil }
            changesAtMs = signed
        }
        return SubscriberETag(profile: profile, documentCursor: documentCursor, configCursor: configCursor, changesAtMs: changesAtMs,
                              secret: kind == UInt8(ascii: "s"), requested: requested)
    }

    /// Lowercase hex of 1–16 digits, as ``text`` writes it.
    private static func hex(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> UInt64? {
        guard (1...16).contains(range.count) else { return nil }
        var value: UInt64 = 0
        for index in range {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    /// FNV-1a of the id's UTF-8: it tells ids apart, it guards nothing (a 304 shows no data).
    static func hash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }
}
