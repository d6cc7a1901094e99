import GatehouseWire
import Testing

/// The error the parser gives for `bytes`, or `nil` when they parse.
private func parseError(_ bytes: [UInt8]) -> JSONParseError? {
    do {
        _ = try JSONParser.parse(bytes)
        return nil
    } catch {
        return error
    }
}

private func parseError(_ text: String) -> JSONParseError? {
    parseError(Array(text.utf8))
}

private func number(_ text: String) -> JSONValue {
    .number(JSONNumber(uncheckedText: text))
}

@Suite struct ParserReadsEveryValueType {
    @Test func literals() throws {
        #expect(try JSONParser.parse("null") == .null)
        #expect(try JSONParser.parse("true") == .bool(true))
        #expect(try JSONParser.parse("false") == .bool(false))
    }

    @Test func numbersAndStrings() throws {
        #expect(try JSONParser.parse("-12.5e3") == number("-12.5e3"))
        #expect(try JSONParser.parse(#""hello""#) == .string("hello"))
        #expect(try JSONParser.parse(#""""#) == .string(""))
    }

    @Test func arraysAndObjects() throws {
        #expect(try JSONParser.parse("[]") == .array([]))
        #expect(try JSONParser.parse("{}") == .object(JSONObject()))
        let value = try JSONParser.parse(#" { "a" : [1, true, null, {"b": "c"}, []], "d": {} } "#)
        let expected: JSONValue = ["a": [1, true, nil, ["b": "c"], []], "d": [:]]
        #expect(value == expected)
    }

    @Test func objectMembersKeepTheirOrder() throws {
        let value = try JSONParser.parse(#"{"z":1,"a":2,"m":3}"#)
        #expect(value.objectValue?.keys == ["z", "a", "m"])
    }

    @Test func everyEntryPointAgrees() throws {
        let text = #"{"id":7,"op":"hello","key":"pk_ü"}"#
        let fromString = try JSONParser.parse(text)
        let fromArray = try JSONParser.parse(Array(text.utf8))
        let fromBuffer = try Array(text.utf8).withUnsafeBytes { raw in try JSONParser.parse(raw) }
        #expect(fromString == fromArray)
        #expect(fromArray == fromBuffer)
    }

    @Test func whitespaceAroundTheValueIsAllowed() throws {
        #expect(try JSONParser.parse(" \t\r\n[ 1 ,\t2 ]\n ") == [1, 2])
    }
}

@Suite struct ParserAcceptsTopLevelScalars {
    // The parser reads any JSON value; checking that a request is an object is the caller's job.
    @Test(arguments: [("1", number("1")), (#""x""#, .string("x")), ("null", .null), ("false", .bool(false))])
    func scalar(text: String, expected: JSONValue) throws {
        #expect(try JSONParser.parse(text) == expected)
    }
}

@Suite struct ParserDecodesEscapes {
    @Test func shortEscapes() throws {
        let value = try JSONParser.parse(#""\" \\ \/ \b \f \n \r \t""#)
        #expect(value == .string("\" \\ / \u{08} \u{0C} \n \r \t"))
    }

    @Test func unicodeEscapes() throws {
        #expect(try JSONParser.parse(#""\u0041\u00e9\u20AC""#) == .string("Aé€"))
        #expect(try JSONParser.parse(#""\u0000""#) == .string("\u{0}"))
    }

    @Test func surrogatePairBecomesOneScalar() throws {
        #expect(try JSONParser.parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try JSONParser.parse(#""a\uD83D\uDE00b""#) == .string("a😀b"))
    }

    @Test func escapesMixWithRawUTF8() throws {
        #expect(try JSONParser.parse(#""ü\n😀\tx""#) == .string("ü\n😀\tx"))
    }

    @Test(arguments: [#""\x""#, #""\u12""#, #""\u12G4""#, #""\U0041""#, #""\'""#, #""\"#])
    func badEscapesAreRejected(text: String) {
        #expect(parseError(text) != nil)
    }
}

@Suite struct ParserRejectsLoneSurrogates {
    @Test(arguments: [
        #""\ud83d""#,  // high surrogate at the end
        #""\ud83dx""#,  // high surrogate followed by a character
        #""\ud83d\u0041""#,  // high surrogate followed by a non-surrogate escape
        #""\ud83d\ud83d""#,  // two high surrogates
        #""\ude00""#,  // low surrogate alone
        #""\ude00\ud83d""#,  // reversed pair
    ])
    func loneSurrogate(text: String) {
        #expect(parseError(text)?.reason == "unpaired surrogate")
    }
}

@Suite struct ParserRejectsInvalidUTF8 {
    @Test(arguments: [
        [0xFF],  // never valid
        [0xC3],  // truncated two-byte sequence
        [0xE2, 0x82],  // truncated three-byte sequence
        [0xF0, 0x9F, 0x98],  // truncated four-byte sequence
        [0xC0, 0xAF],  // overlong '/'
        [0xE0, 0x80, 0xAF],  // overlong three-byte
        [0xF0, 0x80, 0x80, 0xAF],  // overlong four-byte
        [0xED, 0xA0, 0x80],  // encoded surrogate U+D800
        [0xF4, 0x90, 0x80, 0x80],  // U+110000
        [0xF5, 0x80, 0x80, 0x80],  // lead byte past U+10FFFF
        [0x80],  // continuation byte without a lead
        [0xC3, 0x28],  // lead byte followed by ASCII
    ] as [[UInt8]])
    func insideAString(bad: [UInt8]) {
        let input = Array(#"{"k":"a"#.utf8) + bad + Array(#"b"}"#.utf8)
        #expect(parseError(input)?.reason == "invalid UTF-8")
    }

    @Test(arguments: [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80]] as [[UInt8]])
    func asStrayBytes(bad: [UInt8]) {
        #expect(parseError(bad)?.reason == "invalid UTF-8")
        #expect(parseError(Array("[1,".utf8) + bad + Array("]".utf8))?.reason == "invalid UTF-8")
    }

    @Test func inAKey() {
        #expect(parseError([UInt8](#"{""#.utf8) + [0xFF] + Array(#"":1}"#.utf8))?.reason == "invalid UTF-8")
    }

    @Test func validMultibyteTextIsAccepted() throws {
        let text = "é € 😀 \u{10FFFF} \u{E000} \u{D7FF}"
        #expect(try JSONParser.parse("\"\(text)\"") == .string(text))
    }

    @Test func validNonASCIIOutsideAStringIsNamed() {
        #expect(parseError("é")?.reason == "unexpected character 'é'")
    }
}

@Suite struct ParserRejectsControlCharactersInStrings {
    @Test(arguments: [0x00, 0x01, 0x09, 0x0A, 0x0D, 0x1F] as [UInt8])
    func rawControlCharacter(byte: UInt8) {
        let input = Array(#""a"#.utf8) + [byte] + Array(#"b""#.utf8)
        #expect(parseError(input)?.offset == 2)
    }

    @Test func deleteIsAllowed() throws {
        #expect(try JSONParser.parse([0x22, 0x7F, 0x22]) == .string("\u{7F}"))
    }
}

@Suite struct ParserFollowsTheNumberGrammar {
    @Test(arguments: ["0", "-0", "7", "-12", "1e5", "1E5", "1e+5", "1e-5", "1.5E-3", "0.0", "-0.25", "10", "123456789"])
    func validNumber(text: String) throws {
        #expect(try JSONParser.parse(text) == number(text))
        #expect(try JSONParser.parse("[\(text)]") == .array([number(text)]))
    }

    @Test(arguments: [
        "01", "-01", "00", "1.", ".5", "+1", "-", "1e", "1e+", "1.e5", "-.5", "0x10", "1_000", "--1", "1.5.2",
        "Infinity", "-Infinity", "NaN",
    ])
    func invalidNumber(text: String) {
        #expect(parseError(text) != nil)
        #expect(parseError("[\(text)]") != nil)
    }

    @Test func leadingZeroHasItsOwnReason() {
        #expect(parseError("01")?.reason == "leading zeros are not allowed")
    }
}

@Suite struct ParserKeepsNumberText {
    @Test func hugeNumbersAreNotConverted() throws {
        let digits = String(repeating: "9", count: 400)
        #expect(try JSONParser.parse(digits) == number(digits))
        #expect(try JSONParser.parse("1e400") == number("1e400"))
        #expect(try JSONParser.parse("-1E-400") == number("-1E-400"))
    }

    @Test func spellingIsKeptExactly() throws {
        #expect(try JSONParser.parse(#"{"id":1.50}"#).objectValue?["id"]?.numberValue?.text == "1.50")
    }
}

@Suite struct ParserRejectsNonStandardSyntax {
    @Test(arguments: [
        "", "   ", "[1,]", #"{"a":1,}"#, "[,1]", "[1 2]", #"{"a" 1}"#, #"{a:1}"#, #"{'a':1}"#, "['a']",
        "True", "NULL", "nul", "tru", "falsey", "// c\n1", "/* c */ 1", "[1] // c", "{", "[", #"{"a":"#, #"{"a""#,
        "]", "}", "[1}", #"{"a":1]"#, "\u{FEFF}1", #""abc"#, "[\"a\\\"]",
    ])
    func rejected(text: String) {
        #expect(parseError(text) != nil)
    }

    @Test func reasonsAreShortAndHuman() {
        #expect(parseError("x")?.reason == "unexpected character 'x'")
        #expect(parseError(#"{"a":"abc"#)?.reason == "unterminated string")
        #expect(parseError("[1,]")?.reason == "unexpected character ']'")
        #expect(parseError("")?.reason == "unexpected end of input")
        #expect(parseError("[1 2]")?.reason == "expected ',' or ']'")
    }

    @Test func offsetPointsAtTheProblem() {
        #expect(parseError("[1, x]")?.offset == 4)
        #expect(parseError(#"  "abc"#)?.offset == 2)
    }
}

@Suite struct ParserRejectsTrailingCharacters {
    @Test(arguments: ["{} x", "{}{}", "1 2", "[]]", "null,", #""a""b""#, "{}\u{0}"])
    func trailing(text: String) {
        #expect(parseError(text)?.reason == "trailing characters after the value")
    }
}

/// `parseValue(_:from:)` reads one value inside a larger input, for the quick request readers.
@Suite struct ParserReadsOneValueAtAnOffset {
    private static func value(_ text: String, from offset: Int) throws -> (value: JSONValue, end: Int) {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBytes { raw in try JSONParser.parseValue(raw, from: offset) }
    }

    @Test func answersTheValueAndWhereItEndsLeavingWhatFollows() throws {
        let text = #"{"a": [1, {"b":"\u00e9"}] ,"c":2}"#
        let (value, end) = try Self.value(text, from: 5)
        #expect(value == [1, ["b": "é"]])
        #expect(Array(text.utf8)[end...].starts(with: Array(" ,".utf8)))
        #expect(try Self.value(text, from: 1).value == "a")
    }

    @Test func refusesWhatTheWholeParserRefuses() {
        #expect(throws: JSONParseError.self) { try Self.value(#"{"a":01}"#, from: 5) }
        #expect(throws: JSONParseError.self) { try Self.value(#"{"a":"\q"}"#, from: 5) }
        #expect(throws: JSONParseError.self) { try Self.value(#"{"a":[1,}"#, from: 5) }
        #expect(throws: JSONParseError.self) { try Self.value(#"{"a":"#, from: 5) }
    }

    @Test func boundsNestingByItsOwnLimit() throws {
        let text = "[[[]]]"
        #expect(throws: JSONParseError.self) {
            try Array(text.utf8).withUnsafeBytes { raw in try JSONParser.parseValue(raw, from: 0, maxDepth: 2) }
        }
        #expect(try Self.value(text, from: 1).end == 5)
    }
}

@Suite struct ParserLimitsNesting {
    @Test func nestingAtTheLimitIsAccepted() throws {
        let text = String(repeating: "[", count: 128) + String(repeating: "]", count: 128)
        _ = try JSONParser.parse(text)
        let small = String(repeating: "[", count: 3) + String(repeating: "]", count: 3)
        #expect(parseError(small) == nil)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(small, maxDepth: 2) }
    }

    @Test func oneLevelPastTheLimitIsRejected() {
        let text = String(repeating: "[", count: 129) + String(repeating: "]", count: 129)
        #expect(parseError(text) == JSONParseError(offset: 128, reason: "nesting deeper than 128"))
    }

    @Test func hundredThousandArraysFailFast() {
        let input = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        let started = ContinuousClock.now
        let error = parseError(input)
        #expect(ContinuousClock.now - started < .milliseconds(100))
        #expect(error?.reason == "nesting deeper than 128")
    }

    @Test func hundredThousandObjectsFailFast() {
        let input = Array(String(repeating: #"{"a":"#, count: 100_000).utf8)
        let started = ContinuousClock.now
        let error = parseError(input)
        #expect(ContinuousClock.now - started < .milliseconds(100))
        #expect(error?.reason == "nesting deeper than 128")
    }

    @Test func deepValuesAreBuiltCorrectly() throws {
        var expected: JSONValue = 1
        for level in 0..<100 { expected = level.isMultiple(of: 2) ? [expected] : ["k": expected] }
        #expect(try JSONParser.parse(JSONWriter.serialize(expected)) == expected)
    }
}

@Suite struct ParserKeepsDuplicateKeys {
    @Test func lastMemberWinsOnLookup() throws {
        let object = try #require(try JSONParser.parse(#"{"a":1,"b":2,"a":3}"#).objectValue)
        #expect(object.count == 3)
        #expect(object.keys == ["a", "b", "a"])
        #expect(object["a"] == 3)
    }
}

@Suite struct ParserRoundTripsThroughTheWriter {
    static let corpus: [String] = [
        #"{"id":1,"op":"hello","key":"pk_0123456789abcdef"}"#,
        #"{"id":"req-7","op":"profile.get","profile_id":"gh_abc","extra":[1,2.5,-0,1e400,{"n":null}]}"#,
        #"["\"quoted\"","back\\slash","tab\there","nl\nhere","\u0001\u001f","é€😀",""]"#,
        #"{"a":{"b":{"c":[[],[{}],[true,false,null]]}},"a":"dup"}"#,
        #""\ud83d\ude00 \u00e9 \u0000""#,
        "[" + String(repeating: "9", count: 400) + ",-1.5E-300]",
        "0",
    ]

    @Test(arguments: corpus)
    func parseWriteParseIsStable(text: String) throws {
        let first = try JSONParser.parse(text)
        let written = JSONWriter.serialize(first)
        let second = try JSONParser.parse(written)
        #expect(first == second)
        #expect(JSONWriter.serialize(second) == written)
    }
}

/// A small deterministic generator (SplitMix64), so a failure reproduces exactly.
private struct ParserTestGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct ParserAgreesWithTheStandardLibraryOnUTF8 {
    @Test func randomByteStringsInsideQuotes() {
        var random = ParserTestGenerator(state: 8259)
        for _ in 0..<20_000 {
            // Mostly non-ASCII bytes, so lead and continuation bytes meet in every combination;
            // quotes, backslashes and controls are left out because they have JSON meanings.
            let body = (0..<Int.random(in: 1...6, using: &random)).map { _ -> UInt8 in
                Bool.random(using: &random) ? UInt8.random(in: 0x80...0xFF, using: &random) : UInt8(ascii: "a")
            }
            let expected = String(validating: body, as: UTF8.self)
            let parsed = try? JSONParser.parse([0x22] + body + [0x22])
            #expect(parsed?.stringValue == expected, "bytes \(body)")
        }
    }
}

@Suite struct ParserSurvivesMutatedInput {
    @Test func mutatedRequestsParseOrFailCleanly() throws {
        let seed = Array(#"{"id":"r-1","op":"purchase.report","n":[1,-2.5e3,true,null],"s":"é\n\ud83d\ude00"}"#.utf8)
        let alphabet = Array(#"{}[]",:\-+.0123456789eEtrufalsn u"#.utf8) + [0x00, 0x0A, 0x80, 0xC3, 0xED, 0xF4, 0xFF]
        var random = ParserTestGenerator(state: 7411)
        for _ in 0..<20_000 {
            var input = seed
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let position = Int.random(in: 0..<input.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: input[position] = alphabet.randomElement(using: &random)!
                case 1: input.remove(at: position)
                default: input.insert(alphabet.randomElement(using: &random)!, at: position)
                }
                if input.isEmpty { input = seed }
            }
            guard let value = try? JSONParser.parse(input) else { continue }
            let written = JSONWriter.serialize(value)
            #expect(try JSONParser.parse(written) == value)
        }
    }
}
