#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import GatehouseBase
import Testing

@Suite("Log formatting")
struct LogFormattingTests {
    /// 2026-11-29T22:41:03.123Z
    static let instant = Duration.seconds(1_795_992_063) + .milliseconds(123)

    static func record(_ metadata: Logger.Metadata, event: String = "server.listening") -> LogRecord {
        LogRecord(timestamp: instant, level: .info, label: "gatehouse", event: event, metadata: metadata)
    }

    @Test func textLinesPutMetadataAfterTheEventWithSortedKeys() {
        let record = Self.record(["fsync": "always", "address": "127.0.0.1:7411"])
        #expect(
            record.formatted(as: .text)
                == "2026-11-29T22:41:03.123Z info gatehouse server.listening address=127.0.0.1:7411 fsync=always"
        )
    }

    @Test func textValuesThatWouldBreakSplittingAreQuoted() {
        let record = Self.record([
            "a": "two words", "b": "say \"hi\"", "c": "", "d": "k=v", "e": "line\nbreak", "f": "back\\slash",
        ])
        let expected = #"a="two words" b="say \"hi\"" c="" d="k=v" e="line\nbreak" f="back\\slash""#
        #expect(record.formatted(as: .text).hasSuffix("server.listening " + expected))
    }

    @Test func textLinesNeverContainALineBreak() {
        let record = Self.record(["x": "a\r\nb\u{2028}c"], event: "odd\nevent")
        #expect(!record.formatted(as: .text).contains { $0.isNewline })
    }

    @Test func textWritesIntegersAndBooleansBare() {
        let line = Self.record(["took_ms": 12, "ok": false]).formatted(as: .text)
        #expect(line.hasSuffix(" ok=false took_ms=12"))
    }

    @Test func jsonLinesAreOneFlatObjectWithFixedFieldsFirst() {
        let record = Self.record(["fsync": "always", "address": "127.0.0.1:7411", "lsn": 42, "ok": true])
        #expect(
            record.formatted(as: .json)
                == #"{"ts":"2026-11-29T22:41:03.123Z","level":"info","label":"gatehouse","event":"server.listening","#
                + #""address":"127.0.0.1:7411","fsync":"always","lsn":42,"ok":true}"#
        )
    }

    @Test func jsonStringsAreEscaped() {
        let record = Self.record(["v": "q\" b\\ n\n t\t nul\u{0} del\u{7F} ls\u{2028} é"])
        let line = record.formatted(as: .json)
        #expect(line.hasSuffix(#","v":"q\" b\\ n\n t\t nul\u0000 del\u007f ls\u2028 é"}"#))
    }

    @Test func jsonMetadataCannotShadowTheFixedFields() {
        let line = Self.record(["level": "fake", "event": "fake"]).formatted(as: .json)
        #expect(line.hasSuffix(#""event":"server.listening","_event":"fake","_level":"fake"}"#))
    }

    @Test func streamHandlerWritesOneLinePerRecordToItsDescriptor() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]) }
        let handler = StreamLogHandler(format: .json, fileDescriptor: descriptors[1])

        handler.log(Self.record(["n": 1]))
        handler.log(Self.record(["n": 2]))
        close(descriptors[1])

        let output = readAll(descriptors[0])
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3 && lines[2].isEmpty)
        #expect(lines[0].hasSuffix(#""n":1}"#))
        #expect(lines[1].hasSuffix(#""n":2}"#))
    }

    @Test func streamHandlerSurvivesAClosedDescriptor() {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        close(descriptors[0])
        close(descriptors[1])
        // EBADF must cost the line, not the process.
        StreamLogHandler(fileDescriptor: descriptors[1]).log(Self.record([:]))
    }

    private func readAll(_ descriptor: Int32) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

@Suite("ISO-8601 timestamps")
struct ISO8601TimestampTests {
    @Test(arguments: [
        (Duration.zero, "1970-01-01T00:00:00.000Z"),
        (.milliseconds(1), "1970-01-01T00:00:00.001Z"),
        (.milliseconds(-1), "1969-12-31T23:59:59.999Z"),
        (.seconds(951_782_400), "2000-02-29T00:00:00.000Z"),
        (.seconds(951_868_799) + .milliseconds(999), "2000-02-29T23:59:59.999Z"),
        (.seconds(4_107_542_400), "2100-03-01T00:00:00.000Z"),
        (.seconds(1_795_992_063) + .milliseconds(123), "2026-11-29T22:41:03.123Z"),
        (.seconds(253_402_300_799), "9999-12-31T23:59:59.000Z"),
        (.seconds(-62_135_596_800), "0001-01-01T00:00:00.000Z"),
    ])
    func formatsKnownInstants(instant: Duration, expected: String) {
        #expect(ISO8601Timestamp.format(instant) == expected)
    }

    @Test func truncatesToWholeMilliseconds() {
        #expect(ISO8601Timestamp.format(.nanoseconds(999_999)) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601Timestamp.format(.nanoseconds(-1)) == "1969-12-31T23:59:59.999Z")
    }

    @Test func agreesWithTheCLibraryAcrossFourCenturies() {
        var seconds: Int64 = -2_208_988_800  // 1900-01-01
        let end: Int64 = 10_413_792_000  // 2300-01-01
        while seconds < end {
            #expect(ISO8601Timestamp.format(.seconds(seconds)) == gmtimeString(seconds) + ".000Z")
            seconds += 86_400 * 7 + 3_661  // walks across weekdays, hours, minutes and seconds
        }
    }

    private func gmtimeString(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { (value < 10 ? "0" : "") + String(value) }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
            + "T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }
}
