import GatehousePosix
import GatehouseTesting
import Testing

/// A client that knows only PROTOCOL.md: raw lines over a socket, no Gatehouse types.
@Suite struct ProtocolOnlyClient {
    @Test func createsAProjectSaysHelloWithEachKeyPutsAConfigAndReadsItBack() async throws {
        try await withTestServer { server in
            let admin = try server.connect()
            try await admin.send(#"{"id":1,"op":"hello","key":"\#(TestServer.adminKey)"}"#)
            #expect(try await admin.readLine()?.contains(#""role":"admin""#) == true)
            try await admin.send(#"{"id":2,"op":"project.create","project":"demo"}"#)
            let created = try #require(try await admin.readLine())
            let publicKey = try #require(Self.value(of: "public", in: created))
            let secretKey = try #require(Self.value(of: "secret", in: created))

            let backend = try server.connect()
            try await backend.send(#"{"id":"b1","op":"hello","key":"\#(secretKey)"}"#)
            #expect(try await backend.readLine()?.contains(#""role":"server""#) == true)
            let config = #"{"entitlements":[{"id":"pro"}],"products":[{"id":"pro_monthly","type":"subscription","entitlements":["pro"]}],"stores":{"test":true}}"#
            try await backend.send(#"{"id":"b2","op":"config.put","config":\#(config)}"#)
            let put = try #require(try await backend.readLine())
            #expect(put.hasPrefix(#"{"id":"b2","ok":true"#))

            let app = try server.connect()
            try await app.send(#"{"id":1,"op":"hello","key":"\#(publicKey)"}"#)
            #expect(try await app.readLine()?.contains(#""role":"sdk""#) == true)
            try await app.send(#"{"id":2,"op":"config.get"}"#)
            let got = try #require(try await app.readLine())
            #expect(got.hasPrefix(#"{"id":2,"ok":true,"config":{"#))
            #expect(got.contains(#""id":"pro_monthly""#))
            #expect(got.contains(#""test":true"#))
        }
    }

    /// The string value of `"name":"…"` in a line, found the way a shell script would.
    static func value(of name: String, in line: String) -> String? {
        let marker = Array("\"\(name)\":\"".utf8)
        let bytes = Array(line.utf8)
        guard bytes.count >= marker.count else { return nil }
        for start in 0...(bytes.count - marker.count) where Array(bytes[start..<start + marker.count]) == marker {
            let rest = bytes[(start + marker.count)...]
            guard let end = rest.firstIndex(of: UInt8(ascii: "\"")) else { return nil }
            return String(decoding: rest[..<end], as: UTF8.self)
        }
        return nil
    }
}
