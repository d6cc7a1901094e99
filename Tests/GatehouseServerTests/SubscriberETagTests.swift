import GatehouseCore
@testable import GatehouseServer
import Testing

/// The ETag's text (docs/http.md, "ETag revalidation"): written and read back exactly; anything
/// else is no ETag of Gatehouse's, which a revalidation answers with the full body.
@Suite struct SubscriberETagText {
    static let profile = ProfileID(high: 0x0123_4567_89ab_cdef, low: 0xfedc_ba98_7654_3210, tag: 0xabcdef)

    @Test(arguments: [Int64?.none, 0, 1_764_000_000_000, Int64.max])
    func anETagReadsBackAsItWasWritten(changesAtMs: Int64?) {
        for secret in [false, true] {
            let etag = SubscriberETag(profile: Self.profile, documentCursor: 77, configCursor: UInt64.max, changesAtMs: changesAtMs,
                                      secret: secret, requested: SubscriberETag.hash("user-1"))
            #expect(SubscriberETag(parsing: etag.text) == etag, "\(etag.text)")
        }
    }

    @Test func textThatIsNotOneOfItsETagsIsNone() {
        let good = SubscriberETag(profile: Self.profile, documentCursor: 1, configCursor: 2, changesAtMs: 3, secret: false, requested: 4).text
        var parts = good.split(separator: ".").map(String.init)
        let variants: [String] = [
            "", "v1", "W/\"x\"", good + ".", "." + good, good.replacingFirst("v1", "v2"),
            { var p = parts; p[1] = "gh_short"; return p.joined(separator: ".") }(),
            { var p = parts; p[2] = "G"; return p.joined(separator: ".") }(),
            { var p = parts; p[2] = "A"; return p.joined(separator: ".") }(),
            { var p = parts; p[3] = ""; return p.joined(separator: ".") }(),
            { var p = parts; p[3] = String(repeating: "f", count: 17); return p.joined(separator: ".") }(),
            { var p = parts; p[4] = "8000000000000000"; return p.joined(separator: ".") }(),
            { var p = parts; p[5] = "x"; return p.joined(separator: ".") }(),
            { var p = parts; p[5] = "ps"; return p.joined(separator: ".") }(),
        ]
        parts.removeLast()
        for text in variants + [parts.joined(separator: ".")] {
            #expect(SubscriberETag(parsing: text) == nil, "\(text)")
        }
    }
}

extension String {
    fileprivate func replacingFirst(_ target: String, _ replacement: String) -> String {
        guard hasPrefix(target) else { return self }
        return replacement + dropFirst(target.count)
    }
}
