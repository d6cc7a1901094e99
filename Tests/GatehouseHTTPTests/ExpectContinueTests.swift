import GatehouseHTTP
import Testing

/// `Expect: 100-continue` (RFC 9110 §10.1.1): the parser tells the server, once, that a request
/// whose headers are in waits to be told to send its body.
@Suite struct ExpectContinue {
    static let headers = "POST /v1/op HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-Continue\r\n\r\n"

    @Test func aRequestWaitingForItsBodyAsksOnce() throws {
        var parser = HTTPRequestParser()
        parser.append(Array(Self.headers.utf8))
        guard case .needMoreData = parser.next() else { Issue.record("the body is still to come"); return }
        let asked = parser.takeContinueRequest()
        let askedAgain = parser.takeContinueRequest()
        #expect(asked)
        #expect(!askedAgain, "once")
        parser.append(Array("hello".utf8))
        guard case .request(let request) = parser.next() else { Issue.record("the request is complete"); return }
        #expect(request.body == Array("hello".utf8))
        let parserAsked = parser.takeContinueRequest()
        #expect(!parserAsked)
    }

    @Test func noAskWhenTheBodyCameWithTheHeadersOrWithoutTheHeaderOrOnHTTP10() throws {
        var whole = HTTPRequestParser()
        whole.append(Array((Self.headers + "hello").utf8))
        guard case .request = whole.next() else { Issue.record("complete at once"); return }
        let wholeAsked = whole.takeContinueRequest()
        #expect(!wholeAsked)

        var plain = HTTPRequestParser()
        plain.append(Array("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n".utf8))
        _ = plain.next()
        let plainAsked = plain.takeContinueRequest()
        #expect(!plainAsked)

        var old = HTTPRequestParser()
        old.append(Array("POST / HTTP/1.0\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n".utf8))
        _ = old.next()
        let oldAsked = old.takeContinueRequest()
        #expect(!oldAsked, "HTTP/1.0 has no 100 (RFC 9110 §10.1.1)")
    }

    @Test func aBodyRefusedAtItsHeadersNeverAsks() throws {
        var limits = HTTPLimits()
        limits.bodyBytesMax = 4
        var parser = HTTPRequestParser(limits: limits)
        parser.append(Array(Self.headers.utf8))
        guard case .failure(let error) = parser.next() else { Issue.record("413 at the headers"); return }
        #expect(error.status == 413)
        let parserAsked = parser.takeContinueRequest()
        #expect(!parserAsked)
    }
}
