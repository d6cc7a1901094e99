import GatehouseWire
import Synchronization

/// One in-process measurement: `body(n)` does the work `n` times and answers a checksum that
/// depends on every result, which both keeps the optimiser from deleting the work (NIO's
/// trick of benchmarks that return an `Int`) and proves the work was right: it must equal
/// `n * checksumPerIteration`.
struct MicroBenchmark {
    let name: String
    /// What one iteration is, for the output (`op`, `1000 lines`).
    let unit: String
    /// Iterations relative to `--iterations`: splitting 1,000 lines is 1,000 times the work.
    let iterationDivisor: Int
    let checksumPerIteration: Int
    let body: (Int) -> Int
}

struct MicroResult {
    let name: String
    let unit: String
    let iterations: Int
    /// The median and best of the rounds, in nanoseconds per iteration.
    let medianNanoseconds: Double
    let bestNanoseconds: Double

    var line: String {
        "\(name): \(decimal(medianNanoseconds)) ns/\(unit) (best \(decimal(bestNanoseconds)), \(iterations) iterations)"
    }
}

/// `gatehouse-bench micro`: the wire layer's costs, without sockets or the server.
enum MicroBenchmarks {
    /// Each measurement is split into rounds; the median resists a round that a scheduler
    /// hiccup slowed down, and the spread between median and best shows how noisy the run was.
    private static let rounds = 5


    static func measure(_ benchmark: MicroBenchmark, iterations requested: Int) throws(BenchFailure) -> MicroResult {
        let perRound = max(1, requested / benchmark.iterationDivisor / rounds)
        // Warm-up: caches, branch predictors, lazily initialised globals, the allocator's pools.
        try check(benchmark, iterations: max(1, perRound / 10))
        var samples: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<rounds {
            let start = clock.now
            let checksum = benchmark.body(perRound)
            let elapsed = clock.now - start
            sink.store(checksum, ordering: .relaxed)
            try verify(benchmark, iterations: perRound, checksum: checksum)
            samples.append(elapsed.inSeconds * 1e9 / Double(perRound))
        }
        samples.sort()
        return MicroResult(
            name: benchmark.name, unit: benchmark.unit, iterations: perRound * rounds,
            medianNanoseconds: samples[samples.count / 2], bestNanoseconds: samples[0]
        )
    }

    private static func check(_ benchmark: MicroBenchmark, iterations: Int) throws(BenchFailure) {
        let checksum = benchmark.body(iterations)
        sink.store(checksum, ordering: .relaxed)
        try verify(benchmark, iterations: iterations, checksum: checksum)
    }

    private static func verify(_ benchmark: MicroBenchmark, iterations: Int, checksum: Int) throws(BenchFailure) {
        guard checksum == iterations * benchmark.checksumPerIteration else {
            throw BenchFailure("micro \(benchmark.name): checksum \(checksum), expected \(iterations * benchmark.checksumPerIteration)")
        }
    }

    /// Where checksums go: an atomic store is a side effect no optimiser may drop.
    private static let sink = Atomic<Int>(0)
}

// MARK: - The measurements

extension MicroBenchmarks {
    /// A typical request of about 100 bytes: a currency debit as an app backend sends it.
    static let typicalRequest = Array(
        #"{"id":7,"op":"currency.transact","profile_id":"gh_4f3a","currency":"COINS","amount":-5,"idempotency_key":"k"}"#.utf8
    )

    static func all() -> [MicroBenchmark] {
        [jsonParse(), requestParse(), answerWrite(), framerSplit()] + syncScans() + transactScans()
    }

    /// `sync` lines as SDKs may send them: the fast road's reader and answer should cost about
    /// the same whatever the shape (issue 17).
    static let syncShapes = [
        ("with an id", #"{"id":12345,"op":"sync","profile_id":"gh_ASNFZ4mrze_-3LqYdlQyEKvN7w","cursor":42}"#),
        ("without an id", #"{"op":"sync","profile_id":"gh_ASNFZ4mrze_-3LqYdlQyEKvN7w","cursor":42}"#),
        ("in another order, with an unknown member and an escaped id",
         #"{ "cursor" : 42, "app_version": "2.1.0", "profile_id": "gh_ASNFZ4mrze_-3LqYdlQyEKvN7w", "op": "sync", "id": "\u00e9-12345" }"#),
        ("with escaped names and a cursor of 42.0",
         #"{"\u0069d":12345,"o\u0070":"sync","profile\u005fid":"gh_ASNFZ4mrze_-3LqYdlQyEKvN7w","cursor":42.0}"#),
    ]

    /// The fast road's reader and answer on each shape of ``syncShapes``.
    static func syncScans() -> [MicroBenchmark] {
        syncShapes.map { shape, text in
            let line = Array(text.utf8)
            let length = line.withUnsafeBytes { raw in SyncScan.scan(raw).map { $0.nothingChanged(in: raw).count } } ?? -1
            return MicroBenchmark(
                name: "SyncScan and its answer (sync \(shape))", unit: "op", iterationDivisor: 1, checksumPerIteration: length
            ) { iterations in
                line.withUnsafeBytes { raw in
                    var checksum = 0
                    for _ in 0..<iterations { checksum &+= SyncScan.scan(raw)?.nothingChanged(in: raw).count ?? 0 }
                    return checksum
                }
            }
        }
    }

    /// `TransactScan` on the typical transact, and on a sync: every line is offered to it
    /// first, and a sync with `op` last would be read to its end.
    static func transactScans() -> [MicroBenchmark] {
        let lateOp = Array(#"{"id":12345,"profile_id":"gh_ASNFZ4mrze_-3LqYdlQyEKvN7w","cursor":42,"op":"sync"}"#.utf8)
        let declining = MicroBenchmark(
            name: "TransactScan declining a sync whose op comes last", unit: "op", iterationDivisor: 1, checksumPerIteration: 1
        ) { iterations in
            lateOp.withUnsafeBytes { raw in
                var checksum = 0
                for _ in 0..<iterations where TransactScan.scan(raw) == nil { checksum &+= 1 }
                return checksum
            }
        }
        let transact = Array(#"{"id":7,"op":"currency.transact","profile_id":"gh_ASNFZ4mrze_-3LqYdlQyEKvN7w","currency":"COINS","amount":-5,"idempotency_key":"k"}"#.utf8)
        // A scan that failed would add nothing: -1 a round cannot be met then.
        let amount = transact.withUnsafeBytes { TransactScan.scan($0).map { Int($0.amount) } } ?? -1
        let reading = MicroBenchmark(
            name: "TransactScan (\(transact.count)-byte request)", unit: "op", iterationDivisor: 1, checksumPerIteration: amount
        ) { iterations in
            transact.withUnsafeBytes { raw in
                var checksum = 0
                for _ in 0..<iterations { checksum &+= TransactScan.scan(raw).map { Int($0.amount) } ?? 0 }
                return checksum
            }
        }
        return [declining, reading]
    }

    static func jsonParse() -> MicroBenchmark {
        let line = typicalRequest
        let members = (try? JSONParser.parse(line))?.objectValue?.count ?? -1
        return MicroBenchmark(
            name: "JSONParser.parse (\(line.count)-byte request)", unit: "op", iterationDivisor: 1,
            checksumPerIteration: members
        ) { iterations in
            line.withUnsafeBytes { raw in
                var checksum = 0
                for _ in 0..<iterations {
                    checksum &+= (try? JSONParser.parse(raw))?.objectValue?.count ?? 0
                }
                return checksum
            }
        }
    }

    static func requestParse() -> MicroBenchmark {
        let line = typicalRequest
        let opLength = (try? Request(line: line))?.op.utf8.count ?? -1
        return MicroBenchmark(
            name: "Request(line:) (\(line.count)-byte request)", unit: "op", iterationDivisor: 1,
            checksumPerIteration: opLength
        ) { iterations in
            line.withUnsafeBytes { raw in
                var checksum = 0
                for _ in 0..<iterations {
                    checksum &+= (try? Request(line: raw))?.op.utf8.count ?? 0
                }
                return checksum
            }
        }
    }

    static func answerWrite() -> MicroBenchmark {
        let id = JSONValue.int(7)
        let result: JSONObject = ["balance": 95, "transaction_id": "vc_2b8e6d0f4a1c9e73"]
        let length = Answer.success(id: id, result).count
        return MicroBenchmark(
            name: "Answer.success (\(length)-byte answer)", unit: "op", iterationDivisor: 1,
            checksumPerIteration: length
        ) { iterations in
            var checksum = 0
            for _ in 0..<iterations {
                checksum &+= Answer.success(id: id, result).count
            }
            return checksum
        }
    }

    /// 1,000 request lines arriving as a connection reads them: 64 KiB chunks into the framer's
    /// tail, each drained before the next, the way `Connection` does it.
    static func framerSplit() -> MicroBenchmark {
        let lineCount = 1_000
        var stream: [UInt8] = []
        for _ in 0..<lineCount { stream += typicalRequest + [UInt8(ascii: "\n")] }
        let bytes = stream
        return MicroBenchmark(
            name: "LineFramer (1000 lines, \(bytes.count) bytes)", unit: "1000 lines", iterationDivisor: 100,
            checksumPerIteration: lineCount
        ) { iterations in
            var framer = LineFramer(maxLineBytes: 1 << 20)
            var checksum = 0
            bytes.withUnsafeBytes { source in
                for _ in 0..<iterations {
                    var offset = 0
                    while offset < source.count {
                        let chunk = min(64 * 1024, source.count - offset)
                        _ = framer.withUnsafeWritableTail(minimumCapacity: chunk) { tail in
                            tail.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + chunk)]))
                            return chunk
                        }
                        offset += chunk
                        while case .line = framer.next() { checksum &+= 1 }
                    }
                }
            }
            return checksum
        }
    }
}
