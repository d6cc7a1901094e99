import Foundation
import GatehouseBase
import GatehouseTesting
import Testing

/// The Prometheus text format 0.0.4 as `/metrics` serves it: what we write is what Prometheus's
/// own parser reads back.
@Suite struct PrometheusTextFormat {
    @Test func aCounterAGaugeAndAHistogramAreWrittenAsTheFormatSpells() {
        var text = PrometheusText()
        text.counter("gatehouse_wal_syncs_total", help: "Syncs.", [(labels: [], value: 3)])
        text.gauge("gatehouse_connections", help: "Open connections.", [
            (labels: [("transport", "line")], value: 2), (labels: [("transport", "http")], value: 0.25),
        ])
        let histogram = DurationHistogram(bounds: [0.00001, 0.005, 1, 2.5])
        histogram.observe(nanoseconds: 3_000_000)
        histogram.observe(nanoseconds: 4_000_000_000)
        text.histogram("gatehouse_wal_sync_duration_seconds", help: "Sync time.", [(labels: [], snapshot: histogram.snapshot())])
        #expect(String(decoding: text.bytes, as: UTF8.self) == """
            # HELP gatehouse_wal_syncs_total Syncs.
            # TYPE gatehouse_wal_syncs_total counter
            gatehouse_wal_syncs_total 3
            # HELP gatehouse_connections Open connections.
            # TYPE gatehouse_connections gauge
            gatehouse_connections{transport="line"} 2
            gatehouse_connections{transport="http"} 0.25
            # HELP gatehouse_wal_sync_duration_seconds Sync time.
            # TYPE gatehouse_wal_sync_duration_seconds histogram
            gatehouse_wal_sync_duration_seconds_bucket{le="1e-05"} 0
            gatehouse_wal_sync_duration_seconds_bucket{le="0.005"} 1
            gatehouse_wal_sync_duration_seconds_bucket{le="1"} 1
            gatehouse_wal_sync_duration_seconds_bucket{le="2.5"} 1
            gatehouse_wal_sync_duration_seconds_bucket{le="+Inf"} 2
            gatehouse_wal_sync_duration_seconds_sum 4.003
            gatehouse_wal_sync_duration_seconds_count 2

            """)
        #expect(PrometheusText.contentType == "text/plain; version=0.0.4; charset=utf-8")
    }

    @Test func valuesAreWrittenAsPrometheusWritesThem() {
        let cases: [(Double, String)] = [
            (0, "0"), (42, "42"), (-7, "-7"), (1e15, "1000000000000000"), (0.5, "0.5"), (0.0001, "0.0001"),
            (1e20, "1e+20"), (.infinity, "+Inf"), (-.infinity, "-Inf"), (.nan, "NaN"),
        ]
        for (value, written) in cases {
            var text = PrometheusText()
            text.gauge("g", help: "", [(labels: [], value: value)])
            #expect(String(decoding: text.bytes, as: UTF8.self).hasSuffix("\ng \(written)\n"), "\(value)")
        }
    }

    @Test func aFamilyWithNoSamplesStillNamesItsHelpAndType() {
        var text = PrometheusText()
        text.gauge("gatehouse_outbox_pending", help: "Nothing yet.", [])
        #expect(String(decoding: text.bytes, as: UTF8.self) == "# HELP gatehouse_outbox_pending Nothing yet.\n# TYPE gatehouse_outbox_pending gauge\n")
    }

    @Test func helpAndLabelValuesAreEscaped() {
        var text = PrometheusText()
        text.gauge("g", help: "back\\slash\nnew \"line\"", [(labels: [("a", "q\"\\\n")], value: 1)])
        #expect(String(decoding: text.bytes, as: UTF8.self) == "# HELP g back\\\\slash\\nnew \"line\"\n# TYPE g gauge\ng{a=\"q\\\"\\\\\\n\"} 1\n")
    }

    /// Every feature at once, read back by `prometheus_client`'s parser. CI installs it; a
    /// machine without it fails here rather than passing untested.
    @Test func prometheusOwnParserReadsBackEveryFamilyTypeLabelAndValue() async throws {
        let text = Self.everyFeature()
        let directory = try PythonProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/metrics.txt"
        try Data(text.bytes).write(to: URL(fileURLWithPath: path))
        let output = try await PythonProcess.run(Self.parse, arguments: [path])
        let families = try JSONDecoder().decode([ParsedFamily].self, from: Data(output.utf8))
        #expect(families.map(\.name) == ["gatehouse_requests", "gatehouse_read_only", "gatehouse_odd", "gatehouse_outbox_pending",
                                         "gatehouse_request_duration_seconds"])
        #expect(families.map(\.type) == ["counter", "gauge", "gauge", "gauge", "histogram"])
        #expect(families[0].help == "Requests answered, by \\ transport,\nop and code.")
        #expect(families[0].samples == [
            ParsedSample("gatehouse_requests_total", ["transport": "line", "op": "ping", "code": "ok"], 12),
            ParsedSample("gatehouse_requests_total", ["transport": "http", "op": "other", "code": "quote\" back\\slash\nnewline"], 1),
        ])
        #expect(families[1].samples == [ParsedSample("gatehouse_read_only", [:], 0)])
        let odd = families[2].samples.map(\.value)
        #expect(odd.count == 5 && odd[2].isNaN)
        #expect([odd[0], odd[1], odd[3], odd[4]] == [.infinity, -.infinity, 0.125, 1e20])
        #expect(families[3].samples.isEmpty)
        let sync = families[4].samples.filter { $0.labels["op"] == "sync" }
        #expect(sync.filter { $0.name == "gatehouse_request_duration_seconds_bucket" }.map { $0.labels["le"] ?? "" } == [
            "1e-05", "2.5e-05", "5e-05", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05",
            "0.1", "0.25", "0.5", "1", "2.5", "+Inf",
        ])
        #expect(sync.first { $0.labels["le"] == "0.001" }?.value == 1)
        #expect(sync.first { $0.labels["le"] == "0.005" }?.value == 2)
        #expect(sync.first { $0.labels["le"] == "+Inf" }?.value == 3)
        #expect(sync.first { $0.name == "gatehouse_request_duration_seconds_count" }?.value == 3)
        #expect(sync.first { $0.name == "gatehouse_request_duration_seconds_sum" }?.value == 3.003001)
        let ping = families[4].samples.filter { $0.labels["op"] == "ping" }
        #expect(ping.count == DurationHistogram.requestBounds.count + 3)
        #expect(ping.first { $0.labels["le"] == "2.5e-05" }?.value == 1)
    }

    private static func everyFeature() -> PrometheusText {
        var text = PrometheusText()
        text.counter("gatehouse_requests_total", help: "Requests answered, by \\ transport,\nop and code.", [
            (labels: [("transport", "line"), ("op", "ping"), ("code", "ok")], value: 12),
            (labels: [("transport", "http"), ("op", "other"), ("code", "quote\" back\\slash\nnewline")], value: 1),
        ])
        text.gauge("gatehouse_read_only", help: "1 while the disk is full.", [(labels: [], value: 0)])
        text.gauge("gatehouse_odd", help: "Values of every kind.", [
            (labels: [("v", "a")], value: .infinity), (labels: [("v", "b")], value: -.infinity),
            (labels: [("v", "c")], value: .nan), (labels: [("v", "d")], value: 0.125), (labels: [("v", "e")], value: 1e20),
        ])
        text.gauge("gatehouse_outbox_pending", help: "Nothing yet.", [])
        let durations = HistogramArray(count: 2, bounds: DurationHistogram.requestBounds)
        for nanoseconds: UInt64 in [1_000, 3_000_000, 3_000_000_000] { durations.observe(0, nanoseconds: nanoseconds) }
        durations.observe(1, nanoseconds: 20_000)
        text.histogram("gatehouse_request_duration_seconds", help: "Time to answer.", [
            (labels: [("transport", "line"), ("op", "sync")], snapshot: durations.snapshot(0)),
            (labels: [("transport", "line"), ("op", "ping")], snapshot: durations.snapshot(1)),
        ])
        return text
    }

    /// Prints what the parser read as JSON; values as Python's `repr` (JSON has no infinity).
    private static let parse = """
        import json, sys
        from prometheus_client.parser import text_string_to_metric_families
        with open(sys.argv[1], encoding="utf-8") as f:
            families = list(text_string_to_metric_families(f.read()))
        print(json.dumps([{"name": f.name, "type": f.type, "help": f.documentation,
                           "samples": [{"name": s.name, "labels": s.labels, "value": repr(float(s.value))} for s in f.samples]}
                          for f in families]))
        """
}

private struct ParsedFamily: Decodable {
    var name: String
    var type: String
    var help: String
    var samples: [ParsedSample]
}

private struct ParsedSample: Decodable, Equatable {
    var name: String
    var labels: [String: String]
    var value: Double

    init(_ name: String, _ labels: [String: String], _ value: Double) {
        self.name = name
        self.labels = labels
        self.value = value
    }

    private enum CodingKeys: String, CodingKey { case name, labels, value }

    /// The value comes as Python's `repr` of a float (`12.0`, `inf`, `nan`), which `Double` reads.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        labels = try container.decode([String: String].self, forKey: .labels)
        let written = try container.decode(String.self, forKey: .value)
        guard let value = Double(written) else {
            throw DecodingError.dataCorruptedError(forKey: .value, in: container, debugDescription: "not a number: \(written)")
        }
        self.value = value
    }
}
