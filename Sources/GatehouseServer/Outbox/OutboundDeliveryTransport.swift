import GatehouseBase
import GatehouseCore
import GatehouseOutbound
import GatehouseRuntime
import GatehouseWire

/// A delivery attempt for real: the body rendered from the event and the identity it was owed
/// with (the same bytes on every attempt), signed or keyed as its target wants, and sent through
/// the server's outgoing-HTTP thread with the safety DESIGN.md asks for.
struct OutboundDeliveryTransport: DeliveryTransport {
    let client: OutboundHTTPClient
    let allowsPrivate: Bool
    let timeout: Duration

    func attempt(_ delivery: DueDelivery, projectID: ProjectID, timestampSeconds: Int64) async -> AttemptReport {
        var request: OutboundRequest
        let isWebhook: Bool
        if let webhook = delivery.webhook, let secret = webhook.secret {
            let body = WebhookEventBody.render(projectID: projectID.rawValue, event: delivery.event, identity: delivery.identity)
            do throws(OutboundError) {
                request = try DeliveryRequests.webhookRequest(
                    url: webhook.url, eventID: delivery.event.id, timestampSeconds: timestampSeconds, body: body, secret: secret,
                    previousSecret: webhook.previousSecret, authorization: webhook.authorization, allowsPrivate: allowsPrivate)
            } catch {
                return AttemptReport(answer: .failure(retryAfterMs: nil), status: nil, error: error.code.rawValue, latencyMs: 0)
            }
            isWebhook = true
        } else if let (settings, notification) = delivery.oneSignal, let apiKey = settings.apiKey {
            let body = OneSignalMessage.render(settings: settings, notification: notification, event: delivery.event,
                                               identity: delivery.identity)
            request = DeliveryRequests.oneSignalRequest(url: settings.endpointURL, apiKey: apiKey, body: body,
                                                        allowsPrivate: allowsPrivate)
            isWebhook = false
        } else {
            return AttemptReport(answer: .failure(retryAfterMs: nil), status: nil, error: "the target has no secret", latencyMs: 0)
        }
        request.timeout = timeout
        let started = ContinuousClock.now
        let result = await client.send(request)
        let latencyMs = Int64(started.duration(to: .now).wholeMilliseconds)
        let read = isWebhook ? DeliveryRequests.webhookAnswer(result) : DeliveryRequests.oneSignalAnswer(result)
        return AttemptReport(answer: read.0, status: read.status, error: read.error, latencyMs: latencyMs)
    }
}
