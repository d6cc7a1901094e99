import GatehouseHTTP
import Testing

@Suite struct RequestParserReadsRequests {
    @Test func getWithQueryAndRepeatedHeaders() throws {
        let parsed = parse("GET /v1/health?verbose=1&x HTTP/1.1\r\nHost: example.com\r\nX-Tag: one\r\nx-tag: two\r\n\r\n")
        let request = try #require(parsed.requests.first)
        #expect(parsed.requests.count == 1 && parsed.failure == nil)
        #expect(request.method == "GET")
        #expect(request.target == "/v1/health?verbose=1&x")
        #expect(request.path == "/v1/health")
        #expect(request.query == "verbose=1&x")
        #expect(request.versionMajor == 1 && request.versionMinor == 1)
        #expect(request.headers.count == 3)
        #expect(request.headers["HOST"] == "example.com")
        #expect(request.headers["X-TAG"] == "one")
        #expect(request.headers.values("x-Tag") == ["one", "two"])
        #expect(request.headers.map(\.name) == ["Host", "X-Tag", "x-tag"])
        #expect(request.body.isEmpty)
        #expect(request.keepAlive)
    }

    @Test func targetWithoutQueryHasNone() throws {
        let request = try #require(parse("GET /a/b HTTP/1.1\r\nHost: h\r\n\r\n").requests.first)
        #expect(request.path == "/a/b" && request.query == nil)
        let empty = try #require(parse("GET /a? HTTP/1.1\r\nHost: h\r\n\r\n").requests.first)
        #expect(empty.path == "/a" && empty.query == "")
    }

    @Test func postWithContentLengthReadsExactlyTheBody() throws {
        let parsed = parse("POST /v1/op HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n{\"op\":\"x\"}\n")
        let request = try #require(parsed.requests.first)
        #expect(request.method == "POST")
        #expect(parsed.body == "{\"op\":\"x\"}\n")
        #expect(request.headers["content-length"] == "11")
    }

    @Test func headerValuesLoseTheWhitespaceAroundThem() throws {
        let request = try #require(parse("GET / HTTP/1.1\r\nHost:h\r\nX-A: \t spaced  out \t \r\nX-Empty:\r\nX-B:   \r\n\r\n").requests.first)
        #expect(request.headers["x-a"] == "spaced  out")
        #expect(request.headers["x-empty"] == "")
        #expect(request.headers["x-b"] == "")
        #expect(request.headers.count == 4)
    }

    @Test func chunkedBodyWithExtensionsAndTrailersIsDechunked() throws {
        let text = "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value;other\r\nhello\r\n6 ; ext=\"quoted\"\r\n world\r\nA\r\n, chunked!\r\n0;last\r\nX-Checksum: abc\r\nX-More: 1\r\n\r\n"
        let parsed = parse(text)
        let request = try #require(parsed.requests.first)
        #expect(parsed.failure == nil)
        #expect(parsed.body == "hello world, chunked!")
        // Trailers are not headers: a client cannot slip a header in after the checks.
        #expect(request.headers["x-checksum"] == nil && request.headers.count == 2)
    }

    @Test func methodsAreNamedAsHTTPParserNamesThem() throws {
        for method in ["DELETE", "HEAD", "PUT", "PATCH", "OPTIONS"] {
            let request = try #require(parse("\(method) /x HTTP/1.1\r\nHost: h\r\n\r\n").requests.first)
            #expect(request.method == method)
        }
    }

    @Test func requestsArriveThroughTheWritableTail() throws {
        var parser = HTTPRequestParser()
        var remaining = Array("GET /tail HTTP/1.1\r\nHost: h\r\n\r\n".utf8)[...]
        while !remaining.isEmpty {
            let written = parser.withUnsafeWritableTail(minimumCapacity: 1) { tail in
                let count = min(tail.count, remaining.count, 7)
                tail.copyBytes(from: remaining.prefix(count))
                return count
            }
            remaining = remaining.dropFirst(written)
        }
        var parsed = Parsed()
        drain(&parser, into: &parsed)
        #expect(parsed.requests.map(\.path) == ["/tail"])
    }

    @Test func aNegativeTailCountKeepsNothing() {
        var parser = HTTPRequestParser()
        let kept = parser.withUnsafeWritableTail(minimumCapacity: 16) { _ in -1 }
        #expect(kept == -1 && parser.bufferedByteCount == 0)
    }

    @Test func writableTailPassesTheBodysTypedError() {
        struct ReadFailed: Error {}
        var parser = HTTPRequestParser()
        #expect(throws: ReadFailed.self) {
            try parser.withUnsafeWritableTail(minimumCapacity: 1) { (_) throws(ReadFailed) -> Int in throw ReadFailed() }
        }
    }
}

@Suite struct PipelinedRequestsComeOneAtATime {
    static let first = Array("POST /first HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc".utf8)
    static let pair = first + Array("\r\nGET /second HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\n\r\n".utf8)

    private func check(_ parsed: Parsed, _ comment: Comment) {
        #expect(parsed.failure == nil, comment)
        #expect(parsed.requests.map(\.path) == ["/first", "/second"], comment)
        #expect(parsed.requests.map { String(decoding: $0.body, as: UTF8.self) } == ["abc", "de"], comment)
    }

    @Test func theSecondWaitsBufferedUntilAskedFor() throws {
        var parser = HTTPRequestParser()
        parser.append(Self.pair)
        guard case .request(let first) = parser.next() else { Issue.record("no first request"); return }
        #expect(first.path == "/first")
        // The CRLF before the second request is skipped only once its turn comes.
        #expect(parser.bufferedByteCount == Self.pair.count - Self.first.count)
        #expect(!parser.isInsideRequest)
        guard case .request(let second) = parser.next() else { Issue.record("no second request"); return }
        #expect(second.path == "/second")
        guard case .needMoreData = parser.next() else { Issue.record("more than two requests"); return }
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func everySplitPositionGivesTheSameRequests() {
        for split in 0...Self.pair.count {
            var parser = HTTPRequestParser()
            var parsed = Parsed()
            parser.append(Array(Self.pair[..<split]))
            drain(&parser, into: &parsed)
            parser.append(Array(Self.pair[split...]))
            drain(&parser, into: &parsed)
            check(parsed, "split at \(split)")
        }
    }

    @Test func oneByteAtATimeGivesTheSameRequests() {
        var parser = HTTPRequestParser()
        var parsed = Parsed()
        for byte in Self.pair {
            parser.append([byte])
            drain(&parser, into: &parsed)
        }
        check(parsed, "byte at a time")
    }
}

@Suite struct KeepAliveFollowsTheVersion {
    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: h\r\n\r\n", true),
        ("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false),
        ("GET / HTTP/1.1\r\nHost: h\r\nConnection: Keep-Alive\r\n\r\n", true),
        ("GET / HTTP/1.0\r\n\r\n", false),
        ("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true),
        ("GET / HTTP/1.0\r\nConnection: close\r\n\r\n", false),
    ])
    func keepAlive(text: String, expected: Bool) throws {
        let request = try #require(parse(text).requests.first)
        #expect(request.keepAlive == expected)
    }

    @Test func nothingAfterARequestThatClosesIsProcessed() {
        var parser = HTTPRequestParser()
        parser.append(Array("GET /last HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\nGET /never HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        var parsed = Parsed()
        drain(&parser, into: &parsed)
        #expect(parsed.requests.map(\.path) == ["/last"] && parsed.failure == nil)
        #expect(parser.bufferedByteCount == 0)
        parser.append(Array("GET /later HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        drain(&parser, into: &parsed)
        #expect(parsed.requests.count == 1 && parser.bufferedByteCount == 0)
    }
}

@Suite struct ParserTracksWhereARequestIs {
    @Test func headersThenBodyThenBetweenRequests() {
        var parser = HTTPRequestParser()
        #expect(!parser.isReadingHeaders && !parser.isInsideRequest)
        parser.append(Array("\r\n\r\n".utf8))
        guard case .needMoreData = parser.next() else { Issue.record("blank lines made a request"); return }
        #expect(!parser.isReadingHeaders && !parser.isInsideRequest)
        #expect(parser.bufferedByteCount == 0)

        parser.append(Array("P".utf8))
        _ = parser.next()
        #expect(parser.isReadingHeaders && parser.isInsideRequest)
        #expect(parser.bufferedByteCount == 1)

        parser.append(Array("OST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r".utf8))
        _ = parser.next()
        #expect(parser.isReadingHeaders, "the final LF has not arrived")

        parser.append(Array("\nab".utf8))
        _ = parser.next()
        #expect(!parser.isReadingHeaders && parser.isInsideRequest)

        parser.append(Array("cd".utf8))
        guard case .request = parser.next() else { Issue.record("no request"); return }
        #expect(!parser.isReadingHeaders && !parser.isInsideRequest)
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func aFailedParserIsInsideNothing() {
        var parser = HTTPRequestParser()
        parser.append(Array("GET / HTTP/1.1\r\nBad Header: x\r\n\r\n".utf8))
        guard case .failure = parser.next() else { Issue.record("no failure"); return }
        #expect(!parser.isReadingHeaders && !parser.isInsideRequest && parser.bufferedByteCount == 0)
    }
}

@Suite struct UpgradesAreOrdinaryRequests {
    @Test func anUpgradeRequestIsReturnedAndTheNextOneParsedAsHTTP() {
        let parsed = parse(
            "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
                + "POST /after HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nok"
        )
        #expect(parsed.failure == nil)
        #expect(parsed.requests.map(\.path) == ["/ws", "/after"])
        #expect(parsed.requests.last.map { String(decoding: $0.body, as: UTF8.self) } == "ok")
    }
}
