import GatehousePosix
import GatehouseWire

/// One blocking connection used before the load starts: `hello`, the bench project's setup,
/// an op's per-connection setup. Each call waits for its answer, so nothing is left unread
/// in the client's buffer when a load thread takes the socket over.
final class BenchSession {
    let client: LineClient
    let address: HostPort
    private var nextID: Int64 = 0

    /// Setup answers can wait on an fsync; a server silent for this long is not answering.
    static let setupTimeoutMilliseconds = 10_000

    init(connectingTo address: HostPort) throws(BenchFailure) {
        self.address = address
        do {
            client = try LineClient(connectingTo: address, timeoutMilliseconds: Self.setupTimeoutMilliseconds)
        } catch {
            throw BenchFailure("cannot connect to \(address): \(error)")
        }
    }

    /// Says `hello` with `key` and answers the role the server granted.
    @discardableResult
    func hello(_ key: String) throws(BenchFailure) -> String {
        let answer = try call(["op": "hello", "key": .string(key)])
        return answer["role"]?.stringValue ?? "?"
    }

    /// Sends one request with an `id` filled in and answers its result; an error answer,
    /// a closed connection or a timeout is a failure naming the op.
    func call(_ request: JSONObject) throws(BenchFailure) -> JSONObject {
        nextID += 1
        var request = request
        request.prepend("id", .int(nextID))
        let op = request["op"]?.stringValue ?? "?"
        let line: String
        do {
            try client.send(JSONWriter.string(.object(request)))
            guard let answer = try client.readLine() else {
                throw BenchFailure("\(address) closed the connection during \(op)")
            }
            line = answer
        } catch let failure as BenchFailure {
            throw failure
        } catch {
            throw BenchFailure("\(op) on \(address) failed: \(error)")
        }
        guard let answer = (try? JSONParser.parse(line))?.objectValue, answer["ok"]?.boolValue == true else {
            throw BenchFailure("\(op) failed: \(line)")
        }
        return answer
    }

    /// Sends `requests` in one write and reads their answers in order (the server answers a
    /// connection's requests in order): the raw answer lines. For bulk work such as cleanup,
    /// where one round trip per request would take minutes.
    func pipelined(_ requests: [JSONObject]) throws(BenchFailure) -> [String] {
        var bytes: [UInt8] = []
        for request in requests {
            bytes += JSONWriter.serialize(.object(request))
            bytes.append(UInt8(ascii: "\n"))
        }
        var answers: [String] = []
        do {
            try client.sendRaw(bytes)
            while answers.count < requests.count {
                guard let answer = try client.readLine() else {
                    throw BenchFailure("\(address) closed the connection after \(answers.count) of \(requests.count) answers")
                }
                answers.append(answer)
            }
        } catch let failure as BenchFailure {
            throw failure
        } catch {
            throw BenchFailure("pipelined requests to \(address) failed: \(error)")
        }
        return answers
    }

    func close() {
        client.close()
    }
}
