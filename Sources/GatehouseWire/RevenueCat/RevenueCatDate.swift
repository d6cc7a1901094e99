import GatehouseBase

/// Instants as RevenueCat's bodies write them (HTTP.md, "Answers"): ISO 8601 in UTC with three
/// fraction digits and `Z` (`2026-11-29T10:00:00.123Z`), which both SDKs' decoders take.
public enum RevenueCatDate {
    /// 9999-12-31T23:59:59.999Z. Android's parser reads exactly four digits of year and the iOS
    /// formatter none beyond them, so a later instant (an expiry set far out) is written as this
    /// one: a date either SDK fails to read would fail the whole body.
    public static let latestMs: Int64 = 253_402_300_799_999

    /// `ms` since the Unix epoch, held to 1970…9999.
    public static func string(ms: Int64) -> String {
        ISO8601Timestamp.format(.milliseconds(min(max(ms, 0), latestMs)))
    }

    /// The date, or `null` where there is none.
    public static func json(ms: Int64?) -> JSONValue {
        .optional(ms) { .string(string(ms: $0)) }
    }
}
