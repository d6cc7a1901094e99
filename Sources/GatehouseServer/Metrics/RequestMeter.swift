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
/// `gatehouse_request_duration_seconds`).
///
/// One ``Shard`` per event loop: answers are counted on the loop that writes them, the shard's
/// only writer, so counting is a plain store (no locked instruction, no cache line shared with
/// the other loops); a scrape adds the shards up.
final class RequestMeter: Sendable {
    /// Ops in the table plus "other".
    fileprivate static let opCount = Operations.all.count + 1
    /// "ok", then every error code.
    fileprivate static let codes: [ErrorCode?] = [nil] + ErrorCode.allCases.map { $0 }
    fileprivate static let codeIndex: [ErrorCode: Int] = Dictionary(
        uniqueKeysWithValues: ErrorCode.allCases.enumerated().map { ($0.element, $0.offset + 1) }
    )
    fileprivate static let seriesCount = Transport.allCases.count * opCount

    private let shards: [Shard]

    init(loops: Int) {
        shards = (0..<max(loops, 1)).map { _ in Shard() }
    }

    /// The shard of the loop numbered `loop`, for that loop's thread alone.
    func shard(_ loop: Int) -> Shard { shards[loop % shards.count] }

    /// One loop's counts. Written only on its loop's thread.
    final class Shard: Sendable {
        fileprivate let counts = CounterArray(count: seriesCount * codes.count)
        fileprivate let durations = HistogramArray(count: seriesCount, bounds: DurationHistogram.requestBounds)

        /// Counts `times` answers that each took `elapsed` nanoseconds since their bytes were read.
        func record(_ transport: Transport, _ tally: RequestTally, elapsed: UInt64, times: UInt64 = 1) {
            let series = transport.rawValue * RequestMeter.opCount + min(tally.op, RequestMeter.opCount - 1)
            let code = tally.code.map { RequestMeter.codeIndex[$0] ?? 0 } ?? 0
            counts.addOwned(series * RequestMeter.codes.count + code, times)
            durations.observeOwned(series, nanoseconds: elapsed, times: times)
        }

        /// ``record(_:_:elapsed:)`` timed from `receivedAt` to now.
        func record(_ transport: Transport, _ tally: RequestTally, since receivedAt: UInt64) {
            record(transport, tally, elapsed: EventLoop.monotonicNanoseconds() &- receivedAt)
        }
    }

    /// Writes both families; series never seen are left out.
    func write(into text: inout PrometheusText) {
        var totals: [(labels: PrometheusText.Labels, value: Double)] = []
        var histograms: [(labels: PrometheusText.Labels, snapshot: HistogramSnapshot)] = []
        for transport in Transport.allCases {
            for op in 0..<Self.opCount {
                let series = transport.rawValue * Self.opCount + op
                let seen = shards.filter { $0.durations.hasObservations(series) }
                guard let first = seen.first else { continue }
                let labels: PrometheusText.Labels = [("transport", transport.label), ("op", Self.opName(op))]
                histograms.append((labels, seen.dropFirst().reduce(first.durations.snapshot(series)) { $0.adding($1.durations.snapshot(series)) }))
                for (index, code) in Self.codes.enumerated() {
                    let value = seen.reduce(UInt64(0)) { $0 &+ $1.counts.value(series * Self.codes.count + index) }
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
