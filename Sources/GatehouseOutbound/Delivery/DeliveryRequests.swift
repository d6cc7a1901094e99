public import GatehouseCore
import GatehouseBase
import GatehouseHTTP
import GatehouseWire

/// The requests of outbox deliveries and what their answers mean: pure builders, so every
/// attempt of a delivery sends the same body with the same safety options.
public enum DeliveryRequests {
    /// How much of an answer is read; the rest is discarded (only the status counts).
    public static let responseBytesMax = 64 * 1024
    static let connectTimeout = Duration.seconds(10)
    /// The most of a OneSignal error's text kept in the delivery's error.
    static let oneSignalErrorCharactersMax = 200

    /// A webhook delivery signed as Standard Webhooks sign: `webhook-id` is the event id (the
    /// same on every attempt), `webhook-timestamp` this attempt's time, and `webhook-signature`
    /// one signature per secret, the current one first. Throws ``OutboundError/Code/invalidRequest``
    /// for a secret that is not `whsec_` and base64.
    public static func webhookRequest(
        url: String, eventID: String, timestampSeconds: Int64, body: [UInt8], secret: String, previousSecret: String?,
        authorization: String?, allowsPrivate: Bool
    ) throws(OutboundError) -> OutboundRequest {
        let secrets = [secret] + (previousSecret.map { [$0] } ?? [])
        let signature = try StandardWebhookSignature.header(
            id: eventID, timestampSeconds: timestampSeconds, body: body, secrets: secrets)
        var headers: [HTTPHeaders.Element] = [
            (name: "Content-Type", value: "application/json"),
            (name: "webhook-id", value: eventID),
            (name: "webhook-timestamp", value: String(timestampSeconds)),
            (name: "webhook-signature", value: signature),
        ]
        if let authorization { headers.append((name: "Authorization", value: authorization)) }
        headers.append((name: "User-Agent", value: "gatehouse-webhooks"))
        return guarded(url: url, headers: headers, body: body, allowsPrivate: allowsPrivate)
    }

    /// A OneSignal create-message call (`Authorization: Key <api_key>`).
    public static func oneSignalRequest(url: String, apiKey: String, body: [UInt8], allowsPrivate: Bool) -> OutboundRequest {
        let headers: [HTTPHeaders.Element] = [
            (name: "Content-Type", value: "application/json"),
            (name: "Authorization", value: "Key \(apiKey)"),
        ]
        return guarded(url: url, headers: headers, body: body, allowsPrivate: allowsPrivate)
    }

    /// A `POST` with the options every delivery shares: `https` to public addresses only
    /// (unless the server allows private targets), the attempt's time limit, a capped read.
    private static func guarded(url: String, headers: [HTTPHeaders.Element], body: [UInt8], allowsPrivate: Bool)
        -> OutboundRequest
    {
        OutboundRequest(
            method: "POST", url: url, headers: HTTPHeaders(headers), body: body, connectTimeout: connectTimeout,
            timeout: .milliseconds(DeliverySchedule.attemptTimeoutMs), responseBytesMax: responseBytesMax,
            discardsLongBodies: true, schemes: allowsPrivate ? ["http", "https"] : ["https"],
            addressPolicy: allowsPrivate ? .any : .publicOnly)
    }

    // MARK: Answers

    /// What a webhook attempt's result means: 2xx delivered, 410 gone, anything else a failure
    /// (with the answer's `Retry-After`). The error text is `HTTP <status>` or the transport
    /// error's code: never the URL, a header or the body, which may hold secrets.
    public static func webhookAnswer(_ result: Result<OutboundResponse, OutboundError>)
        -> (answer: AttemptAnswer, status: Int?, error: String?)
    {
        switch result {
        case .failure(let failure):
            return (.failure(retryAfterMs: nil), nil, failure.code.rawValue)
        case .success(let response) where response.isSuccess:
            return (.success, response.status, nil)
        case .success(let response) where response.status == 410:
            return (.gone, response.status, "HTTP 410")
        case .success(let response):
            return (.failure(retryAfterMs: response.retryAfter?.wholeMilliseconds), response.status, "HTTP \(response.status)")
        }
    }

    /// Like ``webhookAnswer(_:)``, except that a 2xx whose JSON body lists `errors` (an array or
    /// an object, not empty) is a failure: OneSignal answers 200 to a message it did not send.
    public static func oneSignalAnswer(_ result: Result<OutboundResponse, OutboundError>)
        -> (answer: AttemptAnswer, status: Int?, error: String?)
    {
        let answer = webhookAnswer(result)
        guard answer.answer == .success, case .success(let response) = result, let errors = oneSignalErrors(response.body)
        else { return answer }
        return (.failure(retryAfterMs: nil), response.status, "onesignal errors: \(errors)")
    }

    /// The first error a OneSignal body lists, cut to ``oneSignalErrorCharactersMax``; `nil` when
    /// it lists none. A body that is not JSON (or was cut at the read limit) lists none: the
    /// status already said the message was taken.
    static func oneSignalErrors(_ body: [UInt8]) -> String? {
        guard let parsed = try? JSONParser.parse(body), let errors = parsed.objectValue?["errors"] else { return nil }
        switch errors {
        case .array(let items) where !items.isEmpty: break
        case .object(let members) where !members.isEmpty: break
        default: return nil
        }
        return String(firstText(of: errors).prefix(oneSignalErrorCharactersMax))
    }

    /// The first string in a value (an object's first member as `key: text`).
    private static func firstText(of value: JSONValue) -> String {
        switch value {
        case .string(let text): text
        case .array(let items): items.first.map(firstText(of:)) ?? ""
        case .object(let object): object.members.first.map { "\($0.key): \(firstText(of: $0.value))" } ?? ""
        case .number(let number): number.text
        case .bool(let flag): String(flag)
        case .null: "null"
        }
    }
}
