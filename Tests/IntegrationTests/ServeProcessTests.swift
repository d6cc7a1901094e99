import Foundation
import GatehousePosix
import GatehouseTesting
import GatehouseWire
import Testing

/// `gatehouse serve` as a real process: defaults, the generated admin key, signals.
@Suite struct ServeProcess {
    @Test func firstStartGeneratesAPrivateAdminKeyAndSigtermExitsCleanly() async throws {
        try await withTemporaryDirectory { directory in
            let dataDirectory = directory.appending("data")
            let serve = try await GatehouseProcess.start(["serve", "--data-dir=\(dataDirectory)", "--listen=127.0.0.1:0", "--http=127.0.0.1:0", "--log-format=json"])
            let banner = try #require(await serve.readOutput(until: "admin key"))
            #expect(banner.contains("admin key generated: \(dataDirectory)/admin.key"))
            let address = try #require(Self.listeningAddress(in: banner))

            var keyFile = stat()
            #expect(stat(dataDirectory + "/admin.key", &keyFile) == 0)
            #expect(keyFile.st_mode & 0o777 == 0o600)
            var directoryStatus = stat()
            #expect(stat(dataDirectory, &directoryStatus) == 0)
            #expect(directoryStatus.st_mode & 0o777 == 0o700)

            // The key in the file works, through `call` reading it from the data directory.
            let call = try await GatehouseProcess.start(["call", "--connect=\(address)", "--data-dir=\(dataDirectory)",
                                                    #"{"op":"server.stats"}"#]).finish()
            #expect(call.status == 0, "\(call.errors)")

            serve.signal(SIGTERM)
            let result = await serve.finish()
            #expect(result.status == 0)
            #expect(result.errors.contains(#""event":"server.stopped""#))
            let key = try String(contentsOfFile: dataDirectory + "/admin.key", encoding: .utf8)
            #expect(!result.errors.contains(key.trimmingCharacters(in: .whitespacesAndNewlines)), "the key is never logged")
        }
    }

    @Test func sigtermAnswersWhatIsInFlightBeforeExiting() async throws {
        try await withTemporaryDirectory { directory in
            let serve = try await GatehouseProcess.start(["serve", "--data-dir=\(directory.appending("data"))", "--listen=127.0.0.1:0", "--http=127.0.0.1:0",
                                              "--admin-key=\(TestServer.adminKey)"])
            let banner = try #require(await serve.readOutput(until: "admin key"))
            let address = try #require(Self.listeningAddress(in: banner))
            let client = try TestClient(connectingTo: #require(HostPort(parsing: address)))
            try await client.hello(TestServer.adminKey)
            var batch = ""
            for index in 0..<200 { batch += #"{"id":\#(index),"op":"project.list"}"# + "\n" }
            try await client.sendRaw(Array(batch.utf8))
            // The first answer shows the batch (one small write) has reached the server.
            #expect(try await client.readLine()?.hasPrefix(#"{"id":0,"ok":true"#) == true)
            serve.signal(SIGINT)
            var answered = 1
            while let line = try await client.readLine() {
                #expect(line.hasPrefix(#"{"id":\#(answered),"ok":true"#))
                answered += 1
            }
            #expect(answered == 200)
            #expect(await serve.finish().status == 0)
        }
    }

    @Test func addressInUseRefusesToStartWithExitThree() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let result = try await GatehouseProcess.start(["serve", "--data-dir=\(directory.appending("data"))",
                                                          "--listen=\(server.address)", "--http=127.0.0.1:0", "--admin-key=\(TestServer.adminKey)"]).finish()
                #expect(result.status == 3)
                #expect(result.errors.contains("cannot listen"))
            }
        }
    }

    /// `127.0.0.1:PORT` from the banner's first line.
    static func listeningAddress(in banner: String) -> String? {
        guard let line = banner.split(separator: "\n").first(where: { $0.contains("listening on") }),
            let range = line.range(of: "listening on ")
        else { return nil }
        return line[range.upperBound...].split(separator: " ").first.map(String.init)
    }
}
