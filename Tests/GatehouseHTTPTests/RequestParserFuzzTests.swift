import GatehouseBase
import GatehouseHTTP
import Testing

/// Mutations of good requests: each must parse or fail with one of the parser's statuses, never
/// crash or hang, whatever the bytes and however they are split.
@Suite struct RequestParserSurvivesMutatedRequests {
    static let seeds: [[UInt8]] = [
        "GET /v1/subscribers/%24RCAnonymousID%3Aabc?x=1 HTTP/1.1\r\nHost: example.com\r\nAuthorization: Bearer pk_a_1\r\nX-Platform: iOS\r\n\r\n",
        "POST /v1/op HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"op\":\"ping\"}",
        "POST /v1/receipts HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4;e=1\r\nabcd\r\n2\r\nef\r\n0\r\nT: 1\r\n\r\n",
        "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n",
    ].map { Array($0.utf8) }

    private static let limits: HTTPLimits = {
        var limits = HTTPLimits()
        limits.headerBytesMax = 256
        limits.bodyBytesMax = 64
        return limits
    }()

    @Test func twoThousandMutationsParseOrFailCleanly() {
        var random = RandomSourceGenerator(SeededRandomSource(seed: 0x6874_7470))
        var outcomes: [Int: Int] = [:]
        for round in 0..<2000 {
            let bytes = Self.mutated(Self.seeds[round % Self.seeds.count], &random)
            let outcome = Self.feedInRandomPieces(bytes, &random)
            if let status = outcome.failure?.status {
                #expect([400, 413, 431].contains(status), "round \(round): \(status)")
                outcomes[status, default: 0] += 1
            } else {
                outcomes[200, default: 0] += 1
            }
            #expect(outcome.requests <= 2, "round \(round)")
        }
        // The mutations reach both roads: accepted requests and each kind of refusal.
        #expect(outcomes[200, default: 0] > 0 && outcomes[400, default: 0] > 0)
        #expect(outcomes[413, default: 0] > 0 && outcomes[431, default: 0] > 0)
    }

    @Test func aFreshParserAfterAFailureParsesAGoodRequest() {
        var random = RandomSourceGenerator(SeededRandomSource(seed: 99))
        var failures = 0
        for round in 0..<200 {
            let bytes = Self.mutated(Self.seeds[round % Self.seeds.count], &random)
            guard Self.feedInRandomPieces(bytes, &random).failure != nil else { continue }
            failures += 1
            let good = parse(Self.seeds[0], limits: Self.limits)
            #expect(good.failure == nil && good.requests.count == 1)
        }
        #expect(failures > 0)
    }

    private static func feedInRandomPieces(_ bytes: [UInt8], _ random: inout RandomSourceGenerator) -> (requests: Int, failure: HTTPParseError?) {
        var parser = HTTPRequestParser(limits: limits)
        var parsed = Parsed()
        var remaining = bytes[...]
        while !remaining.isEmpty, parsed.failure == nil {
            let piece = remaining.prefix(Int.random(in: 1...max(1, remaining.count), using: &random))
            parser.append(Array(piece))
            remaining = remaining.dropFirst(piece.count)
            drain(&parser, into: &parsed)
        }
        return (parsed.requests.count, parsed.failure)
    }

    static func mutated(_ seed: [UInt8], _ random: inout RandomSourceGenerator) -> [UInt8] {
        var bytes = seed
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let index = Int.random(in: 0..<max(1, bytes.count), using: &random)
            switch Int.random(in: 0..<7, using: &random) {
            case 0 where !bytes.isEmpty: bytes[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
            case 1: bytes.insert(Self.interestingByte(&random), at: min(index, bytes.count))
            case 2 where !bytes.isEmpty: bytes.remove(at: index)
            case 3: bytes = Array(bytes.prefix(index))
            case 4: bytes = Self.duplicatingAHeader(bytes, &random)
            case 5: bytes.insert(contentsOf: repeatElement(UInt8(ascii: "a"), count: Int.random(in: 1...300, using: &random)), at: min(index, bytes.count))
            default: bytes.insert(contentsOf: Array("\r\nContent-Length: 99".utf8), at: min(index, bytes.count))
            }
        }
        return bytes
    }

    private static func interestingByte(_ random: inout RandomSourceGenerator) -> UInt8 {
        let bytes: [UInt8] = [0, 9, 10, 13, 32, 0x3A, 0x3B, 0x25, 0x7F, 0x80, 0xFF]
        return Int.random(in: 0..<3, using: &random) == 0 ? UInt8.random(in: 0...255, using: &random) : bytes.randomElement(using: &random)!
    }

    /// Repeats one header line (Host, Content-Length, Transfer-Encoding, …) right after itself.
    private static func duplicatingAHeader(_ bytes: [UInt8], _ random: inout RandomSourceGenerator) -> [UInt8] {
        let lineEnds = bytes.indices.filter { bytes[$0] == UInt8(ascii: "\n") }
        guard lineEnds.count >= 2 else { return bytes }
        let which = Int.random(in: 0..<(lineEnds.count - 1), using: &random)
        let line = bytes[(lineEnds[which] + 1)...lineEnds[which + 1]]
        var result = bytes
        result.insert(contentsOf: line, at: lineEnds[which + 1] + 1)
        return result
    }
}
