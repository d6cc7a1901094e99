/// The Stripe API version Gatehouse reads and writes. A webhook endpoint's payloads take the
/// shape of the version the endpoint was made with, and a request's answer the version its
/// `Stripe-Version` header names, so both are pinned to the one the typed values follow.
public enum StripeAPIVersion {
    /// stripe-python's `_ApiVersion.CURRENT` at the snapshot the payload shapes were read from.
    public static let pinned = "2026-06-24.dahlia"
}
