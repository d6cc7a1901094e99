import GatehouseBase
import GatehouseCore
import GatehousePosix

/// Which front end a request came through (the `transport` label).
enum Transport: Int, CaseIterable, Sendable {
    case line = 0
    case http = 1

    var label: String {
        switch self {
        case .line: "line"
        case .http: "http"
        }
    }
}

/// Counts every answered request by transport, op and outcome, and times it from the read of
/// its bytes to its answer being queued for the socket (`gatehouse_requests_total`,
/// `gatehouse_request_duration_seconds`). Recorded on the loop threads, where answers go out;
/// read by a scrape without a lock.
final class RequestMeter: Sendable {
    /// Ops in the table plus "other".
    private static let opCount = Operations.all.count + 1
    /// "ok", then every error code.
    private static let codes: [ErrorCode?] = [nil] + ErrorCode.allCases.map { $0 }
    private static let codeIndex: [ErrorCode: Int] = Dictionary(
        uniqueKeysWithValues: ErrorCode.allCases.enumerated().map { ($0.element, $0.offset + 1) }
    )

    private let counts = CounterArray(count: Transport.allCases.count * opCount * codes.count)
    private let durations = HistogramArray(count: Transport.allCases.count * opCount, bounds: DurationHistogram.requestBounds)

    func record(_ transport: Transport, _ tally: RequestTally, since receivedAt: UInt64) {
        let elapsed = EventLoop.monotonicNanoseconds() &- receivedAt
        let series = transport.rawValue * Self.opCount + min(tally.op, Self.opCount - 1)
        let code = tally.code.map { Self.codeIndex[$0] ?? 0 } ?? 0
        counts.add(series * Self.codes.count + code)
        durations.observe(series, nanoseconds: elapsed)
    }

    /// The count of one series (tests read it through `/metrics`; this is for the server's own).
    func count(_ transport: Transport, op: Int, code: ErrorCode?) -> UInt64 {
        let code = code.map { Self.codeIndex[$0] ?? 0 } ?? 0
        return counts.value((transport.rawValue * Self.opCount + op) * Self.codes.count + code)
    }

    /// Writes both families; series never seen are left out.
    func write(into text: inout PrometheusText) {
        var totals: [(labels: PrometheusText.Labels, value: Double)] = []
        var histograms: [(labels: PrometheusText.Labels, snapshot: HistogramSnapshot)] = []
        for transport in Transport.allCases {
            for op in 0..<Self.opCount {
                let series = transport.rawValue * Self.opCount + op
                guard durations.hasObservations(series) else { continue }
                let labels: PrometheusText.Labels = [("transport", transport.label), ("op", Self.opName(op))]
                histograms.append((labels, durations.snapshot(series)))
                for (index, code) in Self.codes.enumerated() {
                    let value = counts.value(series * Self.codes.count + index)
                    guard value > 0 else { continue }
                    totals.append((labels + [("code", code?.rawValue ?? "ok")], Double(value)))
                }
            }
        }
        text.counter("gatehouse_requests_total", help: "Requests answered, by transport, op and outcome (ok or the error code).", totals)
        text.histogram(
            "gatehouse_request_duration_seconds",
            help: "From reading a request's bytes to queueing its answer (durability wait included), by transport and op.",
            histograms
        )
    }

    private static func opName(_ op: Int) -> String {
        op < Operations.all.count ? Operations.all[op].name : "other"
    }
}
