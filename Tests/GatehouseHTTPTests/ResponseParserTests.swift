import GatehouseHTTP
import Testing

private func responses(_ text: String, headAt: Set<Int> = []) -> (responses: [HTTPParsedResponse], failure: String?) {
    var parser = HTTPResponseParser()
    parser.append(Array(text.utf8))
    var responses: [HTTPParsedResponse] = []
    while true {
        if headAt.contains(responses.count) { parser.expectHead() }
        switch parser.next() {
        case .needMoreData: return (responses, nil)
        case .response(let response): responses.append(response)
        case .failure(let reason): return (responses, reason)
        }
    }
}

@Suite struct ResponseParserReadsResponses {
    @Test func contentLength() throws {
        let parsed = responses("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}")
        let response = try #require(parsed.responses.first)
        #expect(response.status == 201 && response.bodyText == "{\"a\":1}")
        #expect(response.headers["content-type"] == "application/json")
    }

    @Test func chunked() throws {
        let parsed = responses("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n")
        #expect(parsed.responses.map(\.bodyText) == ["abcde"])
    }

    @Test func pipelinedResponsesComeInOrder() {
        let text = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na"
            + "HTTP/1.1 304 Not Modified\r\nX-RevenueCat-ETag: e\r\n\r\n"
            + "HTTP/1.1 204 No Content\r\n\r\n"
            + "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nb\r\n0\r\n\r\n"
        let parsed = responses(text)
        #expect(parsed.failure == nil)
        #expect(parsed.responses.map(\.status) == [200, 304, 204, 404])
        #expect(parsed.responses.map(\.bodyText) == ["a", "", "", "b"])
    }

    @Test func splitAnywhereGivesTheSameResponses() {
        let bytes = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nabHTTP/1.1 500 Internal Server Error\r\nContent-Length: 1\r\n\r\nc".utf8)
        for split in 0...bytes.count {
            var parser = HTTPResponseParser()
            var bodies: [String] = []
            for part in [bytes[..<split], bytes[split...]] {
                parser.append(Array(part))
                while case .response(let response) = parser.next() { bodies.append(response.bodyText) }
            }
            #expect(bodies == ["ab", "c"], "split at \(split)")
        }
    }

    @Test func aBodyUntilCloseEndsAtFinish() throws {
        var parser = HTTPResponseParser()
        parser.append(Array("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nto the".utf8))
        guard case .needMoreData = parser.next() else { Issue.record("ended early"); return }
        parser.append(Array(" end".utf8))
        guard case .needMoreData = parser.next() else { Issue.record("ended early"); return }
        let finished = parser.finish()
        let response = try #require(finished)
        #expect(response.status == 200 && response.bodyText == "to the end")
    }

    @Test func finishWithoutABodyUntilCloseGivesNothing() {
        var parser = HTTPResponseParser()
        parser.append(Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab".utf8))
        _ = parser.next()
        #expect(parser.finish() == nil)
        var fresh = HTTPResponseParser()
        #expect(fresh.finish() == nil)
    }

    @Test func aResponseToHeadHasNoBody() {
        let text = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
        let parsed = responses(text, headAt: [0])
        #expect(parsed.failure == nil)
        #expect(parsed.responses.map(\.bodyText) == ["", "hi"])
        #expect(parsed.responses.first?.headers["content-length"] == "5")
    }

    @Test func chunkDataWithoutItsCRLFFails() {
        let parsed = responses("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n")
        #expect(parsed.responses.isEmpty && parsed.failure != nil)
    }

    @Test func garbageFailsAndStaysFailed() {
        var parser = HTTPResponseParser()
        parser.append(Array("HTTP/1.1 2x0 OK\r\n\r\n".utf8))
        guard case .failure(let reason) = parser.next() else { Issue.record("no failure"); return }
        #expect(!reason.isEmpty)
        parser.append(Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8))
        guard case .failure = parser.next() else { Issue.record("recovered"); return }
    }
}
