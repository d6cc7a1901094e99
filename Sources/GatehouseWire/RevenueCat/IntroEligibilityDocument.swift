public import GatehouseCore

/// The body of `POST /v1/subscribers/{id}/intro_eligibility` (HTTP.md, "Endpoints"):
/// `{product: true|false}` for each product asked about, once each, in the order asked.
public enum IntroEligibilityDocument {
    /// A product is eligible when none of `subscriptions` (what the profile holds, and what it
    /// lost to transfers if the caller counts those as had) is a subscription to it.
    public static func json(productIdentifiers: [String], subscriptions: [Subscription]) -> JSONObject {
        let had = Set(subscriptions.map(\.productID))
        var asked = Set<String>()
        var answer = JSONObject()
        for product in productIdentifiers where asked.insert(product).inserted {
            answer.append(product, .bool(!had.contains(product)))
        }
        return answer
    }
}
