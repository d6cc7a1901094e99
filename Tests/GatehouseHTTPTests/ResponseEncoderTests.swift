import GatehouseHTTP
import Testing

private func encoded(
    _ response: HTTPResponse, keepAlive: Bool = true, versionMinor: Int = 1, headOnly: Bool = false
) -> String {
    var output: [UInt8] = Array("before|".utf8)
    HTTPResponseEncoder.encode(
        response, requestID: "req-1", date: "Sun, 06 Nov 1994 08:49:37 GMT", keepAlive: keepAlive,
        requestVersionMinor: versionMinor, headOnly: headOnly, into: &output
    )
    let text = String(decoding: output, as: UTF8.self)
    #expect(text.hasPrefix("before|"), "encode appends")
    return String(text.dropFirst("before|".count))
}

@Suite struct EncoderWritesExactBytes {
    static let date = "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\nX-Request-Id: req-1\r\n"

    @Test func json200() {
        #expect(
            encoded(.json(200, Array(#"{"status":"ok"}"#.utf8)))
                == "HTTP/1.1 200 OK\r\n\(Self.date)Content-Type: application/json; charset=utf-8\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}"
        )
    }

    @Test func notModifiedHasNeitherContentTypeNorLengthNorBody() {
        let response = HTTPResponse(
            status: 304, contentType: "application/json; charset=utf-8", body: Array("{}".utf8), headers: [("X-RevenueCat-ETag", "abc")]
        )
        #expect(encoded(response) == "HTTP/1.1 304 Not Modified\r\n\(Self.date)X-RevenueCat-ETag: abc\r\n\r\n")
    }

    @Test func noContentHasNoBodyHeaders() {
        #expect(encoded(HTTPResponse(status: 204)) == "HTTP/1.1 204 No Content\r\n\(Self.date)\r\n")
    }

    @Test func methodNotAllowedCarriesAllow() {
        let response = HTTPResponse(status: 405, contentType: HTTPResponse.textContentType, body: Array("no".utf8), headers: [("Allow", "GET, HEAD")])
        #expect(
            encoded(response)
                == "HTTP/1.1 405 Method Not Allowed\r\n\(Self.date)Content-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\nAllow: GET, HEAD\r\n\r\nno"
        )
    }

    @Test func headGetsTheHeadersOfGetWithoutTheBody() {
        #expect(
            encoded(.text(200, "hello"), headOnly: true)
                == "HTTP/1.1 200 OK\r\n\(Self.date)Content-Type: text/plain; charset=utf-8\r\nContent-Length: 5\r\n\r\n"
        )
    }

    @Test func closingSaysSo() {
        #expect(
            encoded(.text(400, "bad"), keepAlive: false)
                == "HTTP/1.1 400 Bad Request\r\n\(Self.date)Content-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\nConnection: close\r\n\r\nbad"
        )
        #expect(encoded(HTTPResponse(status: 204), keepAlive: false, versionMinor: 0) == "HTTP/1.1 204 No Content\r\n\(Self.date)Connection: close\r\n\r\n")
    }

    @Test func http10KeptAliveIsToldSo() {
        #expect(
            encoded(HTTPResponse(status: 200), versionMinor: 0)
                == "HTTP/1.1 200 OK\r\n\(Self.date)Content-Length: 0\r\nConnection: keep-alive\r\n\r\n"
        )
    }

    @Test func extraHeadersKeepTheirOrder() {
        let response = HTTPResponse(status: 503, headers: [("Retry-After", "30"), ("X-B", "2")])
        #expect(encoded(response) == "HTTP/1.1 503 Service Unavailable\r\n\(Self.date)Content-Length: 0\r\nRetry-After: 30\r\nX-B: 2\r\n\r\n")
    }

    @Test(arguments: [(200, "OK"), (201, "Created"), (404, "Not Found"), (413, "Payload Too Large"), (431, "Request Header Fields Too Large"), (529, "Site Is Overloaded"), (599, ""), (42, "")])
    func reasonPhrases(status: Int, phrase: String) {
        #expect(HTTPResponseEncoder.reasonPhrase(status) == phrase)
    }

    @Test func whatItWritesParsesBack() throws {
        var output: [UInt8] = []
        HTTPResponseEncoder.encode(.json(201, Array("[1]".utf8)), requestID: "id", date: "d", keepAlive: true, requestVersionMinor: 1, headOnly: false, into: &output)
        var parser = HTTPResponseParser()
        parser.append(output)
        guard case .response(let response) = parser.next() else { Issue.record("did not parse"); return }
        #expect(response.status == 201 && response.bodyText == "[1]" && response.headers["x-request-id"] == "id")
    }
}

@Suite struct HTTPDateFormatsIMFFixdate {
    @Test(arguments: [
        (Int64(0), "Thu, 01 Jan 1970 00:00:00 GMT"),
        (784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (951_868_799, "Tue, 29 Feb 2000 23:59:59 GMT"),
        (951_868_800, "Wed, 01 Mar 2000 00:00:00 GMT"),
        (1_709_164_800, "Thu, 29 Feb 2024 00:00:00 GMT"),
        (2_147_483_648, "Tue, 19 Jan 2038 03:14:08 GMT"),
        (4_107_456_000, "Sun, 28 Feb 2100 00:00:00 GMT"),
        (4_107_542_400, "Mon, 01 Mar 2100 00:00:00 GMT"),
        (1_767_225_599, "Wed, 31 Dec 2025 23:59:59 GMT"),
        (1_767_225_600, "Thu, 01 Jan 2026 00:00:00 GMT"),
        (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
        (253_402_300_799, "Fri, 31 Dec 9999 23:59:59 GMT"),
    ])
    func knownDates(seconds: Int64, expected: String) {
        #expect(HTTPDate.format(unixSeconds: seconds) == expected)
    }

    /// Walks every day from 1900 to 2400 with the Gregorian leap rule written out, and checks
    /// each day's date and weekday.
    @Test func everyDayFrom1900To2400() {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        var (year, month, day, weekday) = (1900, 1, 1, 1)  // 1900-01-01 was a Monday
        var seconds: Int64 = -2_208_988_800
        var mismatches = 0
        while year < 2401 {
            let expected = "\(weekdays[weekday]), \(day < 10 ? "0" : "")\(day) \(months[month - 1]) \(year) 12:00:00 GMT"
            if HTTPDate.format(unixSeconds: seconds + 43_200) != expected { mismatches += 1 }
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            let length = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
            (day, weekday, seconds) = (day + 1, (weekday + 1) % 7, seconds + 86_400)
            if day > length { (day, month) = (1, month + 1) }
            if month > 12 { (month, year) = (1, year + 1) }
        }
        #expect(mismatches == 0)
    }

    @Test func theCacheAnswersForTheSecondAskedAbout() {
        var cache = HTTPDateCache()
        #expect(cache.string(unixSeconds: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(cache.string(unixSeconds: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(cache.string(unixSeconds: 784_111_778) == "Sun, 06 Nov 1994 08:49:38 GMT")
        #expect(cache.string(unixSeconds: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
    }
}
