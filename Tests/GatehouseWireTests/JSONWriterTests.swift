import GatehouseWire
import Testing

private func quoted(_ string: String) -> String {
    var out: [UInt8] = []
    JSONWriter.appendString(string, to: &out)
    return String(decoding: out, as: UTF8.self)
}

@Suite struct WriterEscapesOnlyWhatJSONRequires {
    @Test(arguments: [
        ("plain", #""plain""#),
        ("", #""""#),
        ("\"", #""\"""#),
        ("\\", #""\\""#),
        ("\n", #""\n""#),
        ("\r", #""\r""#),
        ("\t", #""\t""#),
        ("\u{08}", #""\b""#),
        ("\u{0C}", #""\f""#),
        ("\u{0}", #""\u0000""#),
        ("\u{01}", #""\u0001""#),
        ("\u{1F}", #""\u001f""#),
        ("\u{7F}", "\"\u{7F}\""),
        ("/", #""/""#),
        ("a\"b\\c\nd", #""a\"b\\c\nd""#),
    ])
    func escaping(input: String, expected: String) {
        #expect(quoted(input) == expected)
    }

    @Test func nonASCIIIsWrittenAsRawUTF8() {
        let text = "é € 😀 \u{10FFFF}"
        #expect(quoted(text) == "\"\(text)\"")
        #expect(quoted("ü\n😀") == "\"ü\\n😀\"")
    }

    @Test func appendsAfterExistingBytes() {
        var out = Array("x=".utf8)
        JSONWriter.appendString("y", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #"x="y""#)
    }
}

@Suite struct WriterWritesIntegersWithoutStrings {
    @Test(arguments: [0, 1, -1, 9, 10, -10, 1_234_567_890, Int64.max, Int64.min, Int64.min + 1] as [Int64])
    func integer(value: Int64) {
        var out = Array("[".utf8)
        JSONWriter.appendInt(value, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "[" + String(value))
    }

    @Test func extremes() {
        var out: [UInt8] = []
        JSONWriter.appendInt(.min, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "-9223372036854775808")
        out.removeAll()
        JSONWriter.appendInt(.max, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "9223372036854775807")
    }
}

@Suite struct WriterWritesCompactJSON {
    @Test func scalars() {
        #expect(JSONWriter.string(.null) == "null")
        #expect(JSONWriter.string(true) == "true")
        #expect(JSONWriter.string(false) == "false")
        #expect(JSONWriter.string(.number(JSONNumber(uncheckedText: "1.50e+3"))) == "1.50e+3")
        #expect(JSONWriter.string(.int(Int64.min)) == "-9223372036854775808")
    }

    @Test func nestedStructures() {
        let value: JSONValue = ["a": [1, [], [:], ["b": nil]], "c": "d", "e": [true, false]]
        #expect(JSONWriter.string(value) == #"{"a":[1,[],{},{"b":null}],"c":"d","e":[true,false]}"#)
    }

    @Test func memberOrderIsKept() {
        var object = JSONObject()
        for key in ["zeta", "alpha", "mid", "alpha"] { object.append(key, .string(key)) }
        #expect(JSONWriter.string(.object(object)) == #"{"zeta":"zeta","alpha":"alpha","mid":"mid","alpha":"alpha"}"#)
    }

    @Test func keysAreEscaped() {
        let value: JSONValue = ["a\"b": 1, "\n": 2]
        #expect(JSONWriter.string(value) == #"{"a\"b":1,"\n":2}"#)
    }

    @Test func serializeAndAppendAgree() {
        let value: JSONValue = ["id": 1, "ok": true, "list": ["x", 2]]
        var out = Array("prefix".utf8)
        JSONWriter.append(value, to: &out)
        #expect(out == Array("prefix".utf8) + JSONWriter.serialize(value))
    }
}
