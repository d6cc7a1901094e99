public import GatehouseCore

/// Writes answer lines: `{"id":…,"ok":true,…}` and `{"id":…,"ok":false,"error":{…}}`, each
/// ending in `\n`, with `id` first so a reader can match it without parsing the rest.
public enum Answer {
    public static func success(id: JSONValue, _ result: JSONObject) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        appendSuccess(id: id, result, to: &out)
        return out
    }

    public static func appendSuccess(id: JSONValue, _ result: JSONObject, to out: inout [UInt8]) {
        appendHead(id: id, ok: true, to: &out)
        for member in result.members {
            out.append(UInt8(ascii: ","))
            JSONWriter.appendString(member.key, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.append(member.value, to: &out)
        }
        out.append(contentsOf: "}\n".utf8)
    }

    public static func failure(id: JSONValue, _ error: GatehouseError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(96)
        appendFailure(id: id, error, to: &out)
        return out
    }

    public static func appendFailure(id: JSONValue, _ error: GatehouseError, to out: inout [UInt8]) {
        appendHead(id: id, ok: false, to: &out)
        out.append(contentsOf: #","error":"#.utf8)
        JSONWriter.append(.object(errorObject(error)), to: &out)
        out.append(contentsOf: "}\n".utf8)
    }

    /// `{"id":<id>,"ok":<ok>`: what every answer starts with.
    private static func appendHead(id: JSONValue, ok: Bool, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.append(id, to: &out)
        out.append(contentsOf: ok ? #","ok":true"#.utf8 : #","ok":false"#.utf8)
    }

    /// The wire `error` object: `code`, `message`, then any detail fields.
    public static func errorObject(_ error: GatehouseError) -> JSONObject {
        var object: JSONObject = ["code": .string(error.code.rawValue), "message": .string(error.message)]
        for detail in error.details {
            switch detail {
            case .balance(let balance): object.append("balance", .int(balance))
            case .legacyCode(let code): object.append("legacy_code", .int(code))
            case .limit(let limit): object.append("limit", .int(limit))
            case .obfuscatedEmail(let address): object.append("obfuscated_email", .string(address))
            }
        }
        return object
    }
}
