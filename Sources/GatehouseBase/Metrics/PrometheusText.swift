/// Writes metric families in the Prometheus text exposition format, version 0.0.4: `# HELP`
/// and `# TYPE` lines, then one line per sample. A family with no samples still gets its
/// `# HELP` and `# TYPE`, so a scrape shows every metric the server has, used or not.
///
/// Names and label names come from the code, never from a client: one that breaks the format's
/// rules is a programming error. Label values and help text are escaped.
public struct PrometheusText: Sendable {
    public typealias Labels = [(String, String)]

    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    public private(set) var bytes: [UInt8] = []
    private var written: Set<String> = []

    public init() {}

    /// A counter: `name` ends in `_total`, as the format's conventions ask.
    public mutating func counter(_ name: String, help: String, _ samples: [(labels: Labels, value: Double)]) {
        precondition(name.hasSuffix("_total"), "a counter's name ends in _total: \(name)")
        family(name, type: "counter", help: help)
        for sample in samples { line(name, sample.labels, value: sample.value) }
    }

    public mutating func gauge(_ name: String, help: String, _ samples: [(labels: Labels, value: Double)]) {
        family(name, type: "gauge", help: help)
        for sample in samples { line(name, sample.labels, value: sample.value) }
    }

    /// A histogram: per sample, `name_bucket` for each bound and for `+Inf`, then `name_sum`
    /// and `name_count`.
    public mutating func histogram(_ name: String, help: String, _ samples: [(labels: Labels, snapshot: HistogramSnapshot)]) {
        family(name, type: "histogram", help: help)
        for (labels, snapshot) in samples {
            precondition(!labels.contains { $0.0 == "le" }, "le is the bucket's label in histogram \(name)")
            precondition(snapshot.bounds.count == snapshot.cumulativeCounts.count, "a bucket count per bound in \(name)")
            for (bound, count) in zip(snapshot.bounds, snapshot.cumulativeCounts) {
                line(name + "_bucket", labels + [("le", Self.format(bound))], value: Double(count))
            }
            line(name + "_bucket", labels + [("le", "+Inf")], value: Double(snapshot.count))
            line(name + "_sum", labels, value: snapshot.sumSeconds)
            line(name + "_count", labels, value: Double(snapshot.count))
        }
    }

    private mutating func family(_ name: String, type: String, help: String) {
        precondition(Self.isMetricName(name), "not a metric name: \(name)")
        precondition(written.insert(name).inserted, "metric \(name) written twice")
        append("# HELP ")
        append(name)
        append(" ")
        for byte in help.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): append("\\\\")
            case UInt8(ascii: "\n"): append("\\n")
            default: bytes.append(byte)
            }
        }
        append("\n# TYPE ")
        append(name)
        append(" ")
        append(type)
        append("\n")
    }

    private mutating func line(_ name: String, _ labels: Labels, value: Double) {
        append(name)
        if !labels.isEmpty {
            append("{")
            for (index, (label, labelValue)) in labels.enumerated() {
                precondition(Self.isLabelName(label), "not a label name: \(label) in \(name)")
                if index > 0 { append(",") }
                append(label)
                append("=\"")
                appendEscapedLabelValue(labelValue)
                append("\"")
            }
            append("}")
        }
        append(" ")
        append(Self.format(value))
        append("\n")
    }

    private mutating func appendEscapedLabelValue(_ value: String) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): append("\\\\")
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\n"): append("\\n")
            default: bytes.append(byte)
            }
        }
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// A value as Prometheus writes one: whole numbers without a fraction, `+Inf`, `-Inf`,
    /// `NaN`, anything else in the shortest form that reads back as the same double.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        // Below 2^53 every whole double is exactly an Int64, and prints without an exponent.
        if value == value.rounded(), abs(value) < 0x1p53 { return String(Int64(value)) }
        return value.description
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`
    static func isMetricName(_ name: String) -> Bool {
        isName(name, allowingColon: true)
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, and not `__`-prefixed (reserved for Prometheus itself).
    static func isLabelName(_ name: String) -> Bool {
        isName(name, allowingColon: false) && !name.hasPrefix("__")
    }

    private static func isName(_ name: String, allowingColon: Bool) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                true
            case UInt8(ascii: ":"): allowingColon
            default: false
            }
        }
    }
}
