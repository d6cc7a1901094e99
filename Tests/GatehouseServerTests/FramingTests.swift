import GatehouseCore
import GatehousePosix
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// PROTOCOL.md, "Transport and framing", over real loopback connections.
@Suite struct Framing {
    @Test func thousandPipelinedRequestsInOneWriteAreAnsweredInOrder() async throws {
        try await withTestServer { server in
            let client = try await server.admin()
            var batch = ""
            for index in 0..<1000 {
                // A mix of inline answers (errors, ping) and deferred ones (admin ops through the
                // inbox), so ordering is tested across both paths.
                switch index % 4 {
                case 0: batch += #"{"id":\#(index),"op":"ping"}"# + "\n"
                case 1: batch += #"{"id":\#(index),"op":"project.list"}"# + "\n"
                case 2: batch += #"{"id":\#(index),"op":"no.such.op"}"# + "\n"
                default: batch += #"{"id":\#(index),"op":"project.get","project":"missing"}"# + "\n"
                }
            }
            try await client.sendRaw(Array(batch.utf8))
            for index in 0..<1000 {
                let answer = try await client.readAnswer()
                #expect(answer["id"] == .int(index))
            }
        }
    }

    @Test func carriageReturnNewlineAndBlankLinesAreAccepted() async throws {
        try await withTestServer { server in
            let client = try server.connect()
            try await client.sendRaw(Array("\n\r\n   \n\t\r\n{\"id\":\"a\",\"op\":\"hello\",\"key\":\"\(TestServer.adminKey)\"}\r\n\n".utf8))
            let answer = try await client.readAnswer()
            #expect(answer["id"] == "a")
            #expect(answer.isSuccess)
            // The blank lines produced no answers: the next answer is the next request's.
            let ping = try await client.call("ping")
            #expect(ping.isSuccess)
        }
    }

    @Test func requestSplitAcrossManyWritesIsOneRequest() async throws {
        try await withTestServer { server in
            let client = try server.connect()
            let line = Array(#"{"id":7,"op":"hello","key":"\#(TestServer.adminKey)"}"#.utf8) + [10]
            for byte in line {
                try await client.sendRaw([byte])
            }
            let answer = try await client.readAnswer()
            #expect(answer["id"] == .int(7))
            #expect(answer.isSuccess)
        }
    }

    @Test func lineOverTheLimitIsAnsweredThenClosed() async throws {
        try await withTestServer { server in
            let client = try await server.admin()
            let other = try await server.admin()
            // 2 MiB without a newline: the server must not wait for one.
            var line = Array(#"{"op":"ping","pad":""#.utf8)
            line += [UInt8](repeating: UInt8(ascii: "x"), count: 2 << 20)
            try? await client.sendRaw(line)
            let answer = try await client.readAnswer()
            #expect(answer.errorCode == .lineTooLong)
            #expect(answer["id"] == .null)
            #expect(try await client.readLine() == nil, "the connection is closed after line_too_long")
            // Another connection carries on.
            #expect(try await other.call("ping").isSuccess)
        }
    }

    @Test func lineAtTheLimitIsAccepted() async throws {
        try await withTestServer({ $0.lineBytesMax = 4096 }) { server in
            let client = try await server.admin()
            let prefix = #"{"id":1,"op":"ping","pad":""#
            let suffix = #""}"#
            let pad = String(repeating: "x", count: 4096 - prefix.utf8.count - suffix.utf8.count)
            try await client.send(prefix + pad + suffix)
            #expect(try await client.readAnswer().isSuccess)
            try await client.send(prefix + pad + "x" + suffix)
            #expect(try await client.readAnswer().errorCode == .lineTooLong)
        }
    }

    @Test func peerThatClosesItsSideGetsAnswersBeforeTheClose() async throws {
        try await withTestServer { server in
            let client = try await server.admin()
            try await client.send(#"{"id":1,"op":"project.list"}"#)
            try await client.send(#"{"id":2,"op":"ping"}"#)
            client.finishSending()
            #expect(try await client.readAnswer()["id"] == .int(1))
            #expect(try await client.readAnswer()["id"] == .int(2))
            #expect(try await client.readLine() == nil)
        }
    }
}
