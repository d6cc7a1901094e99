import Foundation
import GatehouseTesting
import GatehouseWire
import Testing

/// The `gatehouse` binary itself, run as a process against a real server.
@Suite struct CommandLineTool {
    @Test func callSendsEachRequestAndPrintsEachAnswer() async throws {
        try await withTestServer { server in
            let call = try await GatehouseProcess.start([
                "call", "--connect=\(server.address)", "--key", TestServer.adminKey,
                #"{"op":"project.create","project":"demo"}"#, #"{"op":"project.get","project":"demo"}"#,
            ])
            let result = await call.finish()
            #expect(result.status == 0, "\(result.errors)")
            let lines = result.output.split(separator: "\n").map(String.init)
            // `#require`, not `lines[0]`: a call killed by the timeout prints nothing, and indexing
            // an empty array would crash the whole test process instead of failing this test.
            try #require(lines.count == 2, "\(result.output)")
            let first = try JSONParser.parse(lines[0]).objectValue
            #expect(first?["id"] == .int(2), "ids are filled in after the hello's")
            #expect(first?["ok"] == true)
            #expect(try JSONParser.parse(lines[1]).objectValue?["ok"] == true)
        }
    }

    @Test func callReadsStandardInputAndExitsNonZeroOnAnErrorAnswer() async throws {
        try await withTestServer { server in
            let input = """
                {"op":"project.list"}

                {"id":"mine","op":"project.get","project":"missing"}
                {"op":"project.list"}
                """
            let call = try await GatehouseProcess.start(["call", "--connect", "\(server.address)"],
                                            environment: ["GATEHOUSE_ADMIN_KEY": TestServer.adminKey], input: input)
            let result = await call.finish()
            #expect(result.status == 1)
            let lines = result.output.split(separator: "\n").map(String.init)
            try #require(lines.count == 3, "\(result.output)")
            #expect(lines[1].hasPrefix(#"{"id":"mine","ok":false,"error":{"code":"not_found""#))
        }
    }

    @Test func callWithABadKeyFailsAndSaysWhy() async throws {
        try await withTestServer { server in
            let call = try await GatehouseProcess.start(["call", "--connect=\(server.address)", "--key=wrong", #"{"op":"ping"}"#])
            let result = await call.finish()
            #expect(result.status == 1)
            #expect(result.errors.contains("unauthorized"))
        }
    }

    @Test func callThatCannotConnectExitsWithThree() async throws {
        let call = try await GatehouseProcess.start(["call", "--connect=127.0.0.1:1", "--key=whatever", #"{"op":"ping"}"#])
        let result = await call.finish()
        #expect(result.status == 3)
    }

    @Test func projectCreateGetListRotateDelete() async throws {
        try await withTestServer { server in
            let common = ["--connect=\(server.address)", "--key=\(TestServer.adminKey)"]
            let create = try await GatehouseProcess.start(["project", "create", "shop", "--name=The Shop"] + common).finish()
            #expect(create.status == 0, "\(create.errors)")
            let created = try #require(try JSONParser.parse(create.output).objectValue)
            #expect(created["project"]?.objectValue?["name"] == "The Shop")
            let secret = try #require(created["keys"]?.objectValue?["secret"]?.stringValue)
            #expect(secret.hasPrefix("sk_shop_"))

            let list = try await GatehouseProcess.start(["project", "list"] + common).finish()
            #expect(list.output.contains(#""id":"shop""#))
            let rotate = try await GatehouseProcess.start(["project", "rotate-keys", "shop", "--which=secret"] + common).finish()
            #expect(rotate.status == 0)
            #expect(!rotate.output.contains(secret))
            let delete = try await GatehouseProcess.start(["project", "delete", "shop"] + common).finish()
            #expect(delete.output.contains(#""deleted":true"#))
            let get = try await GatehouseProcess.start(["project", "get", "shop"] + common).finish()
            #expect(get.status == 1)
            #expect(get.errors.contains("not_found"))
        }
    }

    @Test func projectWithBadUsageExitsWithTwo() async throws {
        for arguments in [["project"], ["project", "launch", "x"], ["project", "get"], ["project", "rotate-keys", "x"],
                          ["serve", "--fsync=sometimes"], ["serve", "--exports-dir="], ["serve", "--bogus"], ["nonsense"],
                          ["serve", "--public-url=https://pay.example.com", "--smtp=smtp://mail.example.com"],
                          ["serve", "--public-url=https://pay.example.com", "--smtp=smtp://mail.example.com",
                           "--smtp-from=noreply@example.com", "--smtp-credentials=/nowhere/at/all"]] {
            let result = try await GatehouseProcess.start(arguments).finish()
            #expect(result.status == 2, "\(arguments)")
            #expect(result.errors.contains("error:"), "\(arguments)")
        }
    }

    @Test func helpExplainsEveryServeOption() async throws {
        let result = try await GatehouseProcess.start(["serve", "--help"]).finish()
        #expect(result.status == 0)
        for option in ["--data-dir", "--exports-dir", "--listen", "--admin-key", "--fsync", "--max-line-bytes", "--max-connections",
                       "--idle-timeout", "--test-clock", "--log-level", "--log-format", "--app-store-root",
                       "--feed-max-events", "--history-per-currency", "--idempotency-hours", "--hello-timeout",
                       "--max-buffered-bytes", "--smtp", "--smtp-from", "--smtp-credentials", "--smtp-insecure"] {
            #expect(result.output.contains(option), "\(option)")
        }
    }
}
