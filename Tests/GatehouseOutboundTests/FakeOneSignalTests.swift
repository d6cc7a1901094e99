import GatehouseHTTP
import GatehouseOutbound
import GatehouseTesting
import GatehouseWire
import Testing

/// The fake of OneSignal's create-message call the outbox's push tests send to, on its own: it
/// takes a push made as OneSignal documents it, refuses a wrong key or a malformed body, and
/// answers as scripted.
@Suite struct FakeOneSignalTests {
    static let appID = "5eb5a37e-b458-11e3-ac11-000c2940e62c"
    static let apiKey = "os_v2_app_test_key"

    static let push: JSONObject = [
        "app_id": .string(appID), "target_channel": "push", "include_aliases": ["external_id": ["customer-42"]],
        "headings": ["en": "Welcome"], "contents": ["en": "Pro is unlocked"], "data": ["type": "INITIAL_PURCHASE"],
    ]

    /// Runs `body` with a fake and a client; stops both after.
    func withFake<T>(_ body: (FakeOneSignal, OutboundHTTPClient) async throws -> T) async throws -> T {
        let fake = try FakeOneSignal(appID: Self.appID, apiKey: Self.apiKey)
        let client = OutboundHTTPClient()
        defer { fake.stop() }
        do {
            let result = try await body(fake, client)
            await client.close()
            return result
        } catch {
            await client.close()
            throw error
        }
    }

    static func send(
        _ client: OutboundHTTPClient, to fake: FakeOneSignal, key: String = apiKey, contentType: String = "application/json",
        body: JSONObject = push
    ) async throws -> OutboundResponse {
        let headers = HTTPHeaders([(name: "Authorization", value: "Key \(key)"), (name: "Content-Type", value: contentType)])
        return try await client.send(
            OutboundRequest(method: "POST", url: fake.url, headers: headers, body: JSONWriter.serialize(.object(body)))
        ).get()
    }

    static func json(_ response: OutboundResponse) throws -> JSONObject? {
        try JSONParser.parse(response.body).objectValue
    }

    @Test func aPushMadeAsOneSignalDocumentsItIsCreated() async throws {
        let (response, seen) = try await withFake { fake, client in
            (try await Self.send(client, to: fake), fake.seen)
        }
        #expect(response.status == 200)
        #expect(try Self.json(response)?["id"]?.stringValue?.isEmpty == false)
        let request = try #require(seen.first)
        #expect(seen.count == 1)
        #expect(request.passed)
        #expect(request.status == 200)
        #expect(request.appID == Self.appID)
        #expect(request.targetChannel == "push")
        #expect(request.externalIDs == ["customer-42"])
        #expect(request.heading == "Welcome")
        #expect(request.content == "Pro is unlocked")
        #expect(request.dataType == "INITIAL_PURCHASE")
    }

    @Test func aWrongKeyIsRefusedWith403AndTakesNoScriptedAnswer() async throws {
        let (refused, next, seen) = try await withFake { fake, client in
            fake.script(answers: [.notSubscribed])
            let refused = try await Self.send(client, to: fake, key: "os_v2_app_other_key")
            return (refused, try await Self.send(client, to: fake), fake.seen)
        }
        #expect(refused.status == 403)
        #expect(seen.map(\.passed) == [false, true])
        #expect(seen[0].status == 403)
        #expect(seen[0].refusal?.contains("Authorization") == true)
        #expect(next.status == 200)
        #expect(try Self.json(next)?["errors"] == ["All included players are not subscribed"])
    }

    @Test func aPushMissingAnyRequiredFieldIsRefusedWith400() async throws {
        var wrongApp = Self.push
        wrongApp["app_id"] = "another-app"
        var noChannel = Self.push
        noChannel["target_channel"] = nil
        var noRecipients = Self.push
        noRecipients["include_aliases"] = ["external_id": []]
        var numericRecipient = Self.push
        numericRecipient["include_aliases"] = ["external_id": [42]]
        var noHeading = Self.push
        noHeading["headings"] = ["fr": "Bienvenue"]
        var noContent = Self.push
        noContent["contents"] = nil
        var noType = Self.push
        noType["data"] = [:]
        let bodies = [wrongApp, noChannel, noRecipients, numericRecipient, noHeading, noContent, noType]
        let (statuses, seen) = try await withFake { fake, client in
            var statuses: [Int] = []
            for body in bodies { statuses.append(try await Self.send(client, to: fake, body: body).status) }
            return (statuses, fake.seen)
        }
        #expect(statuses == Array(repeating: 400, count: bodies.count))
        #expect(seen.map(\.refusal) == [
            "app_id is not the app's", "target_channel is not push",
            "include_aliases.external_id is not a non-empty array of strings",
            "include_aliases.external_id is not a non-empty array of strings", "headings.en is not a string",
            "contents.en is not a string", "data.type is not a string",
        ])
    }

    @Test func aPushNotSentAsJSONIsRefusedWith400AndTakesNoScriptedAnswer() async throws {
        let (refused, next, seen) = try await withFake { fake, client in
            fake.script(answers: [.init(status: 500)])
            let refused = try await Self.send(client, to: fake, contentType: "text/plain")
            return (refused, try await Self.send(client, to: fake), fake.seen)
        }
        #expect(refused.status == 400)
        #expect(seen.map(\.refusal) == ["Content-Type is not application/json", nil])
        #expect(next.status == 500)
    }

    @Test func scriptedAnswersComeInOrderThenTheDefault() async throws {
        let responses = try await withFake { fake, client in
            fake.script(answers: [.notSubscribed, .init(status: 500, body: #"{"errors":["Internal server error"]}"#)])
            var responses: [OutboundResponse] = []
            for _ in 0..<3 { responses.append(try await Self.send(client, to: fake)) }
            return responses
        }
        #expect(responses.map(\.status) == [200, 500, 200])
        #expect(try Self.json(responses[0])?["errors"] == ["All included players are not subscribed"])
        #expect(try Self.json(responses[2])?["id"] != nil)
    }
}
