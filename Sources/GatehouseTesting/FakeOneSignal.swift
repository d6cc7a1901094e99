import Foundation
import GatehouseHTTP
import GatehouseWire
import Synchronization

/// A local stand-in for OneSignal's create-message call (`POST /notifications`) on 127.0.0.1,
/// which checks a push as OneSignal would take it: `Authorization: Key <api key>` (anything else
/// is a 403), a JSON body naming the app, `target_channel: "push"`, a non-empty
/// `include_aliases.external_id`, English `headings` and `contents`, and `data.type`; a body that
/// fails is a 400. Each request is recorded with what it said; those that pass are answered as
/// ``script(answers:default:)`` says, by default `200 {"id": …}`.
public final class FakeOneSignal: Sendable {
    /// One answer of the script.
    public struct Answer: Sendable {
        public var status: Int
        /// `nil`: `{"id": …}` with a fresh id.
        public var body: String?
        public var delay: Duration

        public init(status: Int, body: String? = nil, delay: Duration = .zero) {
            self.status = status
            self.body = body
            self.delay = delay
        }

        /// OneSignal's answer for a message it created.
        public static let created = Answer(status: 200)
        /// OneSignal's 200 for a message none of whose recipients can receive it, which is no success.
        public static let notSubscribed = Answer(status: 200, body: #"{"errors":["All included players are not subscribed"]}"#)
    }

    /// A request as it arrived: what its body said, and why it was refused, if it was.
    public struct Seen: Sendable {
        /// 1 for the first request to arrive, then 2…
        public let order: Int
        public let authorization: String?
        public let contentType: String?
        public let appID: String?
        public let targetChannel: String?
        public let externalIDs: [String]?
        public let heading: String?
        public let content: String?
        public let dataType: String?
        public let body: [UInt8]
        /// Why the request failed the checks (`nil`: it passed).
        public let refusal: String?
        /// The status it was answered with.
        public let status: Int

        public var passed: Bool { refusal == nil }
    }

    public let appID: String
    public let apiKey: String
    private let routes: Routes
    private let server: LoopbackHTTPServer

    public init(appID: String, apiKey: String) throws {
        self.appID = appID
        self.apiKey = apiKey
        routes = Routes(appID: appID, apiKey: apiKey)
        server = try LoopbackHTTPServer { [routes] in routes.handle($0) }
    }

    /// The URL a project's `integrations.onesignal.url` names.
    public var url: String { server.baseURL + "/notifications" }
    public var seen: [Seen] { routes.state.withLock { $0.seen } }

    public func stop() { server.stop() }

    /// Answers the next requests that pass the checks with `answers`, one each in order, and
    /// every later one with `default`.
    public func script(answers: [Answer], default fallback: Answer = .created) {
        routes.state.withLock { state in
            state.answers = answers
            state.fallback = fallback
        }
    }
}

extension FakeOneSignal {
    fileprivate struct State {
        var answers: [Answer] = []
        var fallback = Answer.created
        var seen: [Seen] = []
    }

    /// What the server thread runs for each request.
    fileprivate final class Routes: Sendable {
        let appID: String
        let apiKey: String
        let state = Mutex(State())

        init(appID: String, apiKey: String) {
            self.appID = appID
            self.apiKey = apiKey
        }

        func handle(_ request: HTTPRequest) -> LoopbackReply {
            guard request.method == "POST", request.path == "/notifications" else {
                return .json(404, #"{"errors":["Not found"]}"#)
            }
            let object = (try? JSONParser.parse(request.body))?.objectValue
            let refusal = refusal(of: request, object: object)
            return state.withLock { state in
                let answer: Answer
                if !isAuthorized(request) {
                    answer = Self.accessDenied
                } else if let refusal {
                    answer = Answer(status: 400, body: JSONWriter.string(.object(["errors": [.string(refusal)]])))
                } else {
                    answer = state.answers.isEmpty ? state.fallback : state.answers.removeFirst()
                }
                state.seen.append(Self.seen(request, object, order: state.seen.count + 1, refusal: refusal, status: answer.status))
                return Self.reply(answer)
            }
        }

        static let accessDenied = Answer(
            status: 403, body: #"{"errors":["Access denied.  Please include an 'Authorization: Key ...' header with a valid API key."]}"#)

        private func isAuthorized(_ request: HTTPRequest) -> Bool {
            request.headers["Authorization"] == "Key \(apiKey)"
        }

        /// Why OneSignal would not take `request`, or `nil`.
        private func refusal(of request: HTTPRequest, object: JSONObject?) -> String? {
            guard isAuthorized(request) else { return "Authorization is not Key and the api key" }
            guard request.headers["Content-Type"]?.hasPrefix("application/json") == true else {
                return "Content-Type is not application/json"
            }
            guard let object else { return "body is not a JSON object" }
            guard object["app_id"]?.stringValue == appID else { return "app_id is not the app's" }
            guard object["target_channel"]?.stringValue == "push" else { return "target_channel is not push" }
            guard let ids = object["include_aliases"]?.objectValue?["external_id"]?.arrayValue, !ids.isEmpty,
                ids.allSatisfy({ $0.stringValue != nil })
            else { return "include_aliases.external_id is not a non-empty array of strings" }
            guard object["headings"]?.objectValue?["en"]?.stringValue != nil else { return "headings.en is not a string" }
            guard object["contents"]?.objectValue?["en"]?.stringValue != nil else { return "contents.en is not a string" }
            guard object["data"]?.objectValue?["type"]?.stringValue != nil else { return "data.type is not a string" }
            return nil
        }

        private static func seen(_ request: HTTPRequest, _ object: JSONObject?, order: Int, refusal: String?, status: Int) -> Seen {
            let english = { (key: String) in object?[key]?.objectValue?["en"]?.stringValue }
            return Seen(
                order: order, authorization: request.headers["Authorization"], contentType: request.headers["Content-Type"],
                appID: object?["app_id"]?.stringValue, targetChannel: object?["target_channel"]?.stringValue,
                externalIDs: object?["include_aliases"]?.objectValue?["external_id"]?.arrayValue?.compactMap(\.stringValue),
                heading: english("headings"), content: english("contents"),
                dataType: object?["data"]?.objectValue?["type"]?.stringValue, body: request.body, refusal: refusal,
                status: status)
        }

        private static func reply(_ answer: Answer) -> LoopbackReply {
            let body = answer.body ?? #"{"id":"\#(UUID().uuidString.lowercased())"}"#
            return .respond(.json(answer.status, Array(body.utf8)), delay: answer.delay)
        }
    }
}
