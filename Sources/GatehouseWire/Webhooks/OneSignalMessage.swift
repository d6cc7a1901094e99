public import GatehouseCore

/// The body of a push (DESIGN.md, "Outbound delivery"): OneSignal's create-message call, to the
/// event's customer user ids as OneSignal external ids, with the config's title and message. A
/// pure function of its inputs, as a webhook body is, so every attempt sends the same bytes.
public enum OneSignalMessage {
    public static func render(
        settings: OneSignalSettings, notification: OneSignalNotification, event: Event, identity: EventIdentity
    ) -> [UInt8] {
        JSONWriter.serialize([
            "app_id": .string(settings.appID),
            "target_channel": "push",
            "include_aliases": ["external_id": .array(identity.pushTo.map(JSONValue.string))],
            "headings": ["en": .string(notification.title)],
            "contents": ["en": .string(notification.message)],
            "data": ["type": .string(event.type.rawValue), "event_id": .string(event.id)],
        ])
    }
}
