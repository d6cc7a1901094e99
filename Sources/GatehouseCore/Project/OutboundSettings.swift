/// Where a project's events are delivered (DESIGN.md, "Outbound delivery"): the config's
/// `webhooks` and `integrations`.

/// One webhook endpoint: `POST`s of RevenueCat's envelope, signed the Standard Webhooks way.
public struct WebhookSettings: Sendable, Equatable {
    /// `[a-z0-9][a-z0-9_-]{0,63}`: names the endpoint in `webhook.*` ops and keeps its
    /// deliveries across `config.put`s.
    public var id: String
    /// `https://…` (or `http://` to loopback with `--outbound-allow-private`).
    public var url: String
    /// `whsec_` and base64 of 24–64 bytes. `nil` only in a `config.put` that leaves it to the
    /// server: ``ProjectConfig/fillingWebhookSecrets(from:random:)`` keeps the stored one of the
    /// same id or makes one, so a project's config always holds one.
    public var secret: String?
    /// While set, every delivery carries a signature with it as well (rotation).
    public var previousSecret: String?
    /// Sent as the `Authorization` header, as given (RevenueCat's scheme).
    public var authorization: String?
    /// The event types delivered (``EventType`` raw values); `nil`: all of them.
    public var events: [String]?

    public init(id: String, url: String, secret: String? = nil, previousSecret: String? = nil, authorization: String? = nil,
                events: [String]? = nil)
    {
        self.id = id
        self.url = url
        self.secret = secret
        self.previousSecret = previousSecret
        self.authorization = authorization
        self.events = events
    }

    /// Whether an event of `type` is delivered here (a `TEST` only to the webhook it names).
    public func wants(_ type: EventType) -> Bool {
        guard let events else { return true }
        return events.contains(type.rawValue)
    }
}

/// `integrations`: services Gatehouse calls on the project's behalf.
public struct IntegrationSettings: Sendable, Equatable {
    public var oneSignal: OneSignalSettings?

    public init(oneSignal: OneSignalSettings? = nil) {
        self.oneSignal = oneSignal
    }
}

/// `integrations.onesignal`: a push through OneSignal's create-message call for each listed
/// event type of a profile with a customer user id.
public struct OneSignalSettings: Sendable, Equatable {
    /// OneSignal's create-message endpoint when the config names none.
    public static let defaultURL = "https://api.onesignal.com/notifications"

    public var appID: String
    /// The App API key (`Authorization: Key <api_key>`), a secret. `nil` only in a `config.put`
    /// that keeps the stored one, as ``InAppPurchaseKey/privateKeyPEM`` is.
    public var apiKey: String?
    /// `nil`: ``defaultURL``.
    public var url: String?
    /// What each event type's push says, in the order the config lists them.
    public var notifications: [OneSignalNotification]

    public init(appID: String, apiKey: String?, url: String? = nil, notifications: [OneSignalNotification] = []) {
        self.appID = appID
        self.apiKey = apiKey
        self.url = url
        self.notifications = notifications
    }

    public var endpointURL: String { url ?? Self.defaultURL }

    public func notification(for type: EventType) -> OneSignalNotification? {
        notifications.first { $0.type == type }
    }
}

/// The title and message of one event type's push.
public struct OneSignalNotification: Sendable, Equatable {
    public var type: EventType
    public var title: String
    public var message: String

    public init(type: EventType, title: String, message: String) {
        self.type = type
        self.title = title
        self.message = message
    }
}
