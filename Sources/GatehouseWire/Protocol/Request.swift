public import GatehouseCore

/// One request line, parsed: its `id` (echoed in the answer), its `op`, and its parameters.
public struct Request: Sendable {
    /// The request's `id`: a string, a number, or `null` when the request had none.
    public let id: JSONValue
    public let op: String
    public let fields: Fields

    public init(id: JSONValue, op: String, fields: Fields) {
        self.id = id
        self.op = op
        self.fields = fields
    }

    /// Parses a line. A line that is not a JSON object is `bad_json`; an object without a
    /// string `op`, or with an `id` that is neither a string nor a number, is `bad_request`.
    /// The error carries whatever `id` could be read, so the client can match the answer.
    public init(line: UnsafeRawBufferPointer) throws(RequestError) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            throw RequestError(id: .null, error: GatehouseError(.badJSON, "not valid JSON: \(error.reason) at byte \(error.offset)"))
        }
        guard let object = value.objectValue else {
            throw RequestError(id: .null, error: GatehouseError(.badJSON, "a request must be a JSON object, got \(value.typeName)"))
        }
        let id = object["id"] ?? .null
        switch id {
        case .null, .string, .number:
            break
        default:
            throw RequestError(id: .null, error: .badField("id", "must be a string or a number"))
        }
        guard let opValue = object["op"] else {
            throw RequestError(id: id, error: .badField("op", "is required"))
        }
        guard let op = opValue.stringValue else {
            throw RequestError(id: id, error: .badField("op", "expected a string, got \(opValue.typeName)"))
        }
        self.init(id: id, op: op, fields: Fields(object))
    }

    public init(line: [UInt8]) throws(RequestError) {
        let result = line.withUnsafeBytes { raw in Result { () throws(RequestError) in try Request(line: raw) } }
        self = try result.get()
    }
}

/// A request that could not be parsed far enough to run, with the `id` to answer it under.
public struct RequestError: Error, Sendable {
    public let id: JSONValue
    public let error: GatehouseError
}
