import GatehouseHTTP
import Testing

@Suite struct HeaderBlockLimit {
    @Test func exactlyTheLimitIsAccepted() throws {
        let bytes = request(headerBytes: 16 * 1024, body: "xy")
        let parsed = parse(bytes)
        #expect(parsed.failure == nil)
        #expect(parsed.body == "xy")
    }

    @Test func oneByteOverIs431() {
        #expect(parse(request(headerBytes: 16 * 1024 + 1)).failure?.status == 431)
    }

    @Test func oneByteOverIs431WhenBytesArriveOneAtATime() {
        var parser = HTTPRequestParser()
        var parsed = Parsed()
        for byte in request(headerBytes: 16 * 1024 + 1) where parsed.failure == nil {
            parser.append([byte])
            drain(&parser, into: &parsed)
        }
        #expect(parsed.failure?.status == 431 && parsed.requests.isEmpty)
    }

    @Test func anUnfinishedBlockIsRefusedOnceItPassesTheLimit() {
        let endless = Array(request(headerBytes: 20 * 1024).dropLast(4))
        var parser = HTTPRequestParser()
        parser.append(Array(endless.prefix(16 * 1024)))
        guard case .needMoreData = parser.next() else { Issue.record("refused at the limit"); return }
        parser.append([endless[16 * 1024]])
        guard case .failure(let error) = parser.next() else { Issue.record("not refused"); return }
        #expect(error.status == 431)
    }

    @Test func leadingLineBreaksDoNotCount() {
        #expect(parse(Array("\r\n\r\n".utf8) + request(headerBytes: 16 * 1024)).failure == nil)
    }

    @Test func aSmallerLimitIsHonoured() {
        var limits = HTTPLimits()
        limits.headerBytesMax = 200
        #expect(parse(request(headerBytes: 200), limits: limits).failure == nil)
        #expect(parse(request(headerBytes: 201), limits: limits).failure?.status == 431)
    }

    @Test func theSecondOfAPipelinedPairIsCountedOnItsOwn() {
        let parsed = parse(request(headerBytes: 10 * 1024) + request(headerBytes: 10 * 1024))
        #expect(parsed.failure == nil && parsed.requests.count == 2)
    }
}

@Suite struct BodyLimit {
    static let limit = 1 << 20

    @Test func contentLengthAtTheLimitIsAccepted() {
        let body = String(repeating: "b", count: Self.limit)
        let parsed = parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \(Self.limit)\r\n\r\n" + body)
        #expect(parsed.failure == nil && parsed.requests.first?.body.count == Self.limit)
    }

    @Test func contentLengthOneOverIsRefusedBeforeTheBody() {
        var parser = HTTPRequestParser()
        parser.append(Array("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \(Self.limit + 1)\r\n\r\n".utf8))
        guard case .failure(let error) = parser.next() else { Issue.record("not refused at the headers"); return }
        #expect(error.status == 413)
    }

    @Test func chunkedAtTheLimitIsAccepted() {
        let half = Self.limit / 2
        let chunk = String(half, radix: 16) + "\r\n" + String(repeating: "c", count: half) + "\r\n"
        let parsed = parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk + chunk + "0\r\n\r\n")
        #expect(parsed.failure == nil && parsed.requests.first?.body.count == Self.limit)
    }

    @Test func chunkedOneOverIsRefusedAtTheChunkThatPassesIt() {
        var parser = HTTPRequestParser()
        let half = Self.limit / 2
        let chunk = String(half, radix: 16) + "\r\n" + String(repeating: "c", count: half) + "\r\n"
        parser.append(Array(("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk + "\(String(half + 1, radix: 16))\r\n").utf8))
        guard case .failure(let error) = parser.next() else { Issue.record("not refused at the chunk size"); return }
        #expect(error.status == 413)
    }

    @Test func aSmallerLimitIsHonoured() {
        var limits = HTTPLimits()
        limits.bodyBytesMax = 3
        #expect(parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc", limits: limits).failure == nil)
        #expect(parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nabcd", limits: limits).failure?.status == 413)
        let chunked = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(parse(chunked + "2\r\nab\r\n1\r\nc\r\n0\r\n\r\n", limits: limits).failure == nil)
        #expect(parse(chunked + "2\r\nab\r\n2\r\n", limits: limits).failure?.status == 413)
    }

    @Test func endlessChunkFramingIsRefused() {
        var limits = HTTPLimits()
        limits.bodyBytesMax = 100
        let extensions = String(repeating: ";e", count: 40)
        let chunked = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(parse(chunked + "1\(extensions)\r\na\r\n0\r\n\r\n", limits: limits).failure == nil)
        #expect(parse(chunked + "1\(extensions)\r\na\r\n1\(extensions)\r\nb\r\n", limits: limits).failure?.status == 413)
    }
}

@Suite struct RequestsHTTPParserWouldLetThrough {
    @Test func http11WithoutHostIs400() {
        #expect(parse("GET / HTTP/1.1\r\nX-A: b\r\n\r\n").failure?.status == 400)
    }

    @Test func http10WithoutHostIsAccepted() {
        #expect(parse("GET / HTTP/1.0\r\n\r\n").requests.count == 1)
    }

    @Test func twoHostHeadersAre400() {
        #expect(parse("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n").failure?.status == 400)
    }

    @Test(arguments: ["Host : example.com", "X-A\t: b", "X A: b", "X-A  : b"])
    func whitespaceInAHeaderNameIs400(line: String) {
        let parsed = parse("GET / HTTP/1.1\r\nHost: h\r\n\(line)\r\n\r\n")
        #expect(parsed.failure?.status == 400 && parsed.requests.isEmpty)
    }

    @Test func whitespaceBeforeTheColonIs400EvenWhenSplitThere() {
        var parser = HTTPRequestParser()
        var parsed = Parsed()
        for piece in ["GET / HTTP/1.1\r\nHost: h\r\nX-A", " ", ": b\r\n\r\n"] {
            parser.append(Array(piece.utf8))
            drain(&parser, into: &parsed)
        }
        #expect(parsed.failure?.status == 400)
    }

    @Test(arguments: [
        "Content-Length: 3\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: chunked\r\nContent-Length: 3",
        "Transfer-Encoding: gzip\r\nContent-Length: 3",
    ])
    func contentLengthWithTransferEncodingIs400(headers: String) {
        let parsed = parse("POST / HTTP/1.1\r\nHost: h\r\n\(headers)\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        #expect(parsed.failure?.status == 400 && parsed.requests.isEmpty)
    }

    @Test(arguments: ["Content-Length: 3\r\nContent-Length: 4", "Content-Length: 3\r\nContent-Length: 3", "Content-Length: 3, 4"])
    func repeatedContentLengthIs400(headers: String) {
        #expect(parse("POST / HTTP/1.1\r\nHost: h\r\n\(headers)\r\n\r\nabcd").failure?.status == 400)
    }

    @Test(arguments: ["3\r\nabcXY0\r\n\r\n", "3\r\nabc\rX0\r\n\r\n", "3\r\nabcd\r\n0\r\n\r\n", "3\r\nabc\n0\r\n\r\n"])
    func chunkDataNotFollowedByCRLFIs400WhereverTheBytesSplit(chunks: String) {
        let bytes = Array(("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks).utf8)
        for split in 0...bytes.count {
            var parser = HTTPRequestParser()
            var parsed = Parsed()
            for part in [bytes[..<split], bytes[split...]] {
                parser.append(Array(part))
                drain(&parser, into: &parsed)
            }
            #expect(parsed.failure?.status == 400 && parsed.requests.isEmpty, "split at \(split)")
        }
    }

    @Test func transferEncodingNotEndingInChunkedIs400() {
        #expect(parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\nabc").failure?.status == 400)
    }

    @Test(arguments: ["GET /a#frag HTTP/1.1", "GET /caf\u{E9} HTTP/1.1", "GET /a\tb HTTP/1.1"])
    func aTargetWithCharactersOutsideVisibleASCIIIs400(line: String) {
        #expect(parse("\(line)\r\nHost: h\r\n\r\n").failure?.status == 400)
    }

    @Test(arguments: ["GET / HTTP/2.0", "GET / HTTP/0.9"])
    func otherVersionsAre400(line: String) {
        #expect(parse("\(line)\r\nHost: h\r\n\r\n").failure?.status == 400)
    }
}

@Suite struct GarbageIsRefused {
    @Test(arguments: [
        "\u{0}\u{1}\u{2}\r\n\r\n",
        "HELLO\r\n\r\n",
        "GET\r\n\r\n",
        "GET / HTTP/1.1 extra\r\nHost: h\r\n\r\n",
        "GET / FTP/1.1\r\nHost: h\r\n\r\n",
        "{\"op\":\"ping\"}\n",
        "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1x\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "GET / HTTP/1.1\r\n: no name\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\u{1}b\r\n\r\n",
    ])
    func garbageIs400(text: String) {
        let parsed = parse(text)
        #expect(parsed.failure?.status == 400 && parsed.requests.isEmpty, "\(text.debugDescription)")
    }

    @Test func aFailedParserKeepsItsFailureAndDropsWhatFollows() {
        var parser = HTTPRequestParser()
        parser.append(Array("BREW /pot HTCPCP/1.0\r\n\r\n".utf8))
        guard case .failure(let first) = parser.next() else { Issue.record("no failure"); return }
        parser.append(Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        guard case .failure(let again) = parser.next() else { Issue.record("recovered"); return }
        #expect(first == again && first.status == 400 && !first.reason.isEmpty)
        #expect(parser.bufferedByteCount == 0)
    }
}
