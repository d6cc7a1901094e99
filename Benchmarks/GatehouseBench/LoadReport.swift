import GatehouseWire

/// The figures of one load run, merged over its connections.
struct LoadReport: Sendable {
    let op: String
    let target: String
    let connections: Int
    let pipeline: Int
    let threads: Int
    let warmupSeconds: Double
    let durationSeconds: Double
    let requests: Int
    let errors: Int
    let warmupErrors: Int
    let stalledRequests: Int
    let firstErrorAnswer: String?
    let latencies: LatencyHistogram

    init(plan: LoadPlan, target: BenchTarget, timeline: LoadTimeline, results: [LoadCounts]) {
        op = plan.op.name
        self.target = target.label
        connections = plan.connections
        pipeline = plan.pipeline
        threads = min(plan.threads, plan.connections)
        warmupSeconds = Double(timeline.measureFromNanoseconds - timeline.startNanoseconds) / 1e9
        durationSeconds = timeline.measuredSeconds
        requests = results.reduce(0) { $0 + $1.requests }
        errors = results.reduce(0) { $0 + $1.errors }
        warmupErrors = results.reduce(0) { $0 + $1.warmupErrors }
        stalledRequests = results.reduce(0) { $0 + $1.stalledRequests }
        firstErrorAnswer = results.lazy.compactMap(\.firstErrorAnswer).first
        var merged = LatencyHistogram()
        for result in results { merged.add(result.latencies) }
        latencies = merged
    }

    var requestsPerSecond: Double {
        durationSeconds > 0 ? Double(requests) / durationSeconds : 0
    }

    /// The percentiles reported, with their names in the human line and the JSON keys.
    private var percentiles: [(label: String, key: String, microseconds: Double)] {
        [
            ("p50", "p50_us", microseconds(latencies.percentile(0.50))),
            ("p90", "p90_us", microseconds(latencies.percentile(0.90))),
            ("p99", "p99_us", microseconds(latencies.percentile(0.99))),
            ("p99.9", "p999_us", microseconds(latencies.percentile(0.999))),
            ("max", "max_us", microseconds(latencies.maxNanoseconds)),
        ]
    }

    /// Why this run must fail the process, or nil. Speed is never a reason: figures on shared
    /// machines vary, and CI only checks that the tool and the server work.
    var problem: String? {
        if requests == 0 { return "\(op): no request completed in \(decimal(durationSeconds)) s" }
        if stalledRequests > 0 {
            let seconds = LoadCounts.stallNanoseconds / 1_000_000_000
            return "\(op): \(stalledRequests) requests were still unanswered after \(seconds) s at the end: the server stalled"
        }
        let failed = errors + warmupErrors
        guard failed > 0 else { return nil }
        return "\(op): \(failed) error answers (\(warmupErrors) during warm-up); the first: \(firstErrorAnswer ?? "?")"
    }

    var humanLine: String {
        let latency = percentiles.map { "\($0.label) \(decimal($0.microseconds))" }.joined(separator: " ")
        return "\(op): \(connections) conns x pipeline \(pipeline), \(decimal(durationSeconds)) s: "
            + "\(requests) requests, \(Int(requestsPerSecond.rounded())) req/s, latency us \(latency), "
            + "errors \(errors) [\(target); \(threads) generator thread(s)]"
    }

    var json: JSONValue {
        var object: JSONObject = [
            "op": .string(op),
            "target": .string(target),
            "connections": .int(connections),
            "pipeline": .int(pipeline),
            "generator_threads": .int(threads),
            "warmup_s": .number(JSONNumber(warmupSeconds)),
            "duration_s": .number(JSONNumber(durationSeconds)),
            "requests": .int(requests),
            "requests_per_second": .int(Int(requestsPerSecond.rounded())),
        ]
        for percentile in percentiles {
            object.append(percentile.key, .number(JSONNumber(percentile.microseconds)))
        }
        object.append("errors", .int(errors))
        object.append("warmup_errors", .int(warmupErrors))
        object.append("stalled_requests", .int(stalledRequests))
        return .object(object)
    }

    private func microseconds(_ nanoseconds: UInt64) -> Double {
        (Double(nanoseconds) / 100).rounded() / 10
    }
}
