import GatehouseServer
import Testing

@Suite("Argument parser")
struct ArgumentParserTests {
    static let serve = ArgumentParser(
        command: "gatehouse serve",
        summary: "Run the server.",
        options: [
            .value("data-dir", placeholder: "DIR", help: "Directory for the log and snapshots."),
            .value("listen", placeholder: "ADDRESS", help: "Address to accept clients on.", repeatable: true),
            .flag("test-clock", help: "Let tests move the clock."),
        ]
    )

    static let call = ArgumentParser(
        command: "gatehouse call",
        summary: "Send one request.",
        options: [.value("to", placeholder: "ADDRESS", help: "Server address.")],
        positionals: "OP [JSON]"
    )

    static func expectError(
        _ parser: ArgumentParser,
        _ arguments: [String],
        _ kind: ArgumentError.Kind,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(throws: ArgumentError(command: parser.command, kind: kind), sourceLocation: sourceLocation) {
            try parser.parse(arguments)
        }
    }

    // MARK: Accepted forms

    @Test func acceptsValuesWithAnEqualsSign() throws {
        let parsed = try Self.serve.parse(["--data-dir=/var/lib/gatehouse"])
        #expect(parsed.value("data-dir") == "/var/lib/gatehouse")
    }

    @Test func acceptsValuesAsTheNextArgument() throws {
        let parsed = try Self.serve.parse(["--data-dir", "/var/lib/gatehouse", "--test-clock"])
        #expect(parsed.value("data-dir") == "/var/lib/gatehouse")
        #expect(parsed.flag("test-clock"))
    }

    @Test func onlyTheFirstEqualsSignSplitsNameFromValue() throws {
        let parsed = try Self.serve.parse(["--data-dir=a=b"])
        #expect(parsed.value("data-dir") == "a=b")
    }

    @Test func anEqualsSignAllowsValuesThatLookLikeOptions() throws {
        let parsed = try Self.serve.parse(["--data-dir=--odd", "--listen=-h"])
        #expect(parsed.value("data-dir") == "--odd")
        #expect(parsed.value("listen") == "-h")
    }

    @Test func separateValuesMayStartWithASingleDash() throws {
        let parsed = try Self.serve.parse(["--data-dir", "-"])
        #expect(parsed.value("data-dir") == "-")
    }

    @Test func anEmptyValueIsStillAValue() throws {
        let parsed = try Self.serve.parse(["--data-dir="])
        #expect(parsed.value("data-dir") == "")
    }

    @Test func absentOptionsReadAsNilEmptyOrFalse() throws {
        let parsed = try Self.serve.parse([])
        #expect(parsed.value("data-dir") == nil)
        #expect(parsed.values("listen").isEmpty)
        #expect(!parsed.flag("test-clock"))
        #expect(!parsed.helpRequested)
        #expect(parsed.positionals.isEmpty)
    }

    @Test func repeatableOptionsCollectEveryValueInOrder() throws {
        let parsed = try Self.serve.parse(["--listen=127.0.0.1:7411", "--listen", "[::1]:7411"])
        #expect(parsed.values("listen") == ["127.0.0.1:7411", "[::1]:7411"])
        #expect(parsed.value("listen") == "[::1]:7411")
    }

    @Test func positionalsMixWithOptionsInOrder() throws {
        let parsed = try Self.call.parse(["profile.get", "--to", "127.0.0.1:7411", "{}"])
        #expect(parsed.positionals == ["profile.get", "{}"])
        #expect(parsed.value("to") == "127.0.0.1:7411")
    }

    @Test func aDoubleDashEndsOptions() throws {
        let parsed = try Self.call.parse(["--to=x", "--", "--to", "-h", "--help", "-"])
        #expect(parsed.value("to") == "x")
        #expect(parsed.positionals == ["--to", "-h", "--help", "-"])
        #expect(!parsed.helpRequested)
    }

    @Test func aTrailingDoubleDashIsAllowedWithoutPositionals() throws {
        let parsed = try Self.serve.parse(["--test-clock", "--"])
        #expect(parsed.flag("test-clock"))
    }

    // MARK: Help

    @Test(arguments: [["-h"], ["--help"], ["--data-dir=x", "--help"]])
    func helpIsReportedNotActedOn(arguments: [String]) throws {
        #expect(try Self.serve.parse(arguments).helpRequested)
    }

    @Test func helpKeepsWhatWasParsedAlongsideIt() throws {
        let parsed = try Self.serve.parse(["--help", "--data-dir=x"])
        #expect(parsed.helpRequested)
        #expect(parsed.value("data-dir") == "x")
    }

    @Test(arguments: [
        ["--bogus", "--help"], ["--help", "--bogus"], ["stray", "-h"], ["--data-dir", "-h"], ["--test-clock=1", "-h"],
    ])
    func helpWinsOverUsageErrors(arguments: [String]) throws {
        let parsed = try Self.serve.parse(arguments)
        #expect(parsed.helpRequested)
        #expect(parsed.value("data-dir") == nil)
    }

    @Test func helpAfterADoubleDashIsAPositional() throws {
        Self.expectError(Self.serve, ["--bogus", "--", "--help"], .unknownOption("--bogus", suggestion: nil))
    }

    // MARK: Errors

    @Test func unknownOptionsAreRejected() {
        Self.expectError(Self.serve, ["--bogus"], .unknownOption("--bogus", suggestion: nil))
        Self.expectError(Self.serve, ["--bogus=1"], .unknownOption("--bogus=1", suggestion: nil))
        Self.expectError(Self.serve, ["--=x"], .unknownOption("--=x", suggestion: nil))
    }

    @Test func unknownOptionsSuggestTheClosestDeclaredOne() {
        Self.expectError(Self.serve, ["--dta-dir=x"], .unknownOption("--dta-dir=x", suggestion: "--data-dir"))
        Self.expectError(Self.serve, ["--lisen", "x"], .unknownOption("--lisen", suggestion: "--listen"))
        Self.expectError(Self.serve, ["--hepl"], .unknownOption("--hepl", suggestion: "--help"))
    }

    @Test func singleDashOptionsOtherThanHelpAreUnknown() {
        Self.expectError(Self.serve, ["-v"], .unknownOption("-v", suggestion: nil))
        Self.expectError(Self.serve, ["-data-dir=x"], .unknownOption("-data-dir=x", suggestion: "--data-dir"))
    }

    @Test func aValueOptionAtTheEndIsMissingItsValue() {
        Self.expectError(Self.serve, ["--data-dir"], .missingValue(option: "data-dir"))
    }

    @Test func aValueOptionFollowedByAnotherOptionIsMissingItsValue() {
        Self.expectError(Self.serve, ["--data-dir", "--listen", "x"], .missingValue(option: "data-dir"))
        Self.expectError(Self.serve, ["--data-dir", "--", "x"], .missingValue(option: "data-dir"))
    }

    @Test func nonRepeatableOptionsMayAppearOnce() {
        Self.expectError(Self.serve, ["--data-dir=a", "--data-dir", "b"], .repeatedOption("data-dir"))
        Self.expectError(Self.serve, ["--test-clock", "--test-clock"], .repeatedOption("test-clock"))
    }

    @Test func flagsRejectValues() {
        Self.expectError(Self.serve, ["--test-clock=yes"], .valueForFlag("test-clock"))
        Self.expectError(Self.serve, ["--test-clock="], .valueForFlag("test-clock"))
    }

    @Test func aFlagDoesNotSwallowTheNextArgument() {
        Self.expectError(Self.serve, ["--test-clock", "yes"], .unexpectedPositional("yes"))
    }

    @Test func positionalsAreRejectedWhereNoneAreDeclared() {
        Self.expectError(Self.serve, ["extra"], .unexpectedPositional("extra"))
        Self.expectError(Self.serve, ["--", "--data-dir"], .unexpectedPositional("--data-dir"))
    }

    @Test func errorsNameTheCommandAndTheProblem() {
        let kind = ArgumentError.Kind.unknownOption("--dta-dir", suggestion: "--data-dir")
        let error = ArgumentError(command: "gatehouse serve", kind: kind)
        #expect(error.description == "gatehouse serve: unknown option '--dta-dir' (did you mean '--data-dir'?)")
        #expect(error.hint == "Try 'gatehouse serve --help' for more information.")
        let messages = [
            ArgumentError.Kind.unknownOption("--x", suggestion: nil): "unknown option '--x'",
            .missingValue(option: "data-dir"): "option '--data-dir' needs a value",
            .repeatedOption("data-dir"): "option '--data-dir' may be given only once",
            .valueForFlag("test-clock"): "option '--test-clock' does not take a value",
            .unexpectedPositional("extra"): "unexpected argument 'extra'",
        ]
        for (kind, message) in messages {
            #expect(ArgumentError(command: "c", kind: kind).message == message)
        }
    }

    // MARK: Help text

    @Test func helpTextListsUsageSummaryAndAlignedOptions() {
        #expect(
            Self.serve.helpText() == """
                usage: gatehouse serve [options]

                Run the server.

                options:
                  --data-dir=DIR    Directory for the log and snapshots.
                  --listen=ADDRESS  Address to accept clients on. (repeatable)
                  --test-clock      Let tests move the clock.
                  -h, --help        show this help and exit

                """
        )
    }

    @Test func helpTextShowsPositionalUsage() {
        #expect(Self.call.helpText().hasPrefix("usage: gatehouse call [options] OP [JSON]\n"))
    }

    @Test func handMadeSummaryLayoutIsKept() {
        let summary = """
            Manages projects:
              create ID [--name=NAME]   creates a project
              list                      lists the projects
            """
        let parser = ArgumentParser(command: "gatehouse project", summary: summary, options: [])
        #expect(parser.helpText().contains("\n\n" + summary + "\n\noptions:\n"))
    }

    @Test func longSummaryLinesBreakUnderTheirSecondColumn() {
        let row = "  rotate-keys ID      replaces one key; the old one stops working at once, for every client"
        let parser = ArgumentParser(command: "gatehouse project", summary: "Manages projects:\n" + row, options: [])
        let lines = parser.helpText().split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[2] == "Manages projects:")
        #expect(lines[3] == "  rotate-keys ID      replaces one key; the old one stops working at once, for")
        #expect(lines[4] == "                      every client")
    }

    @Test func optionsWithoutHelpGetNoTrailingSpaces() {
        let parser = ArgumentParser(command: "c", summary: "", options: [.flag("quiet", help: "")])
        #expect(parser.helpText().contains("\n  --quiet\n"))
    }

    @Test func longHelpWrapsUnderItsColumnWithinEightyCharacters() {
        let parser = ArgumentParser(
            command: "gatehouse serve",
            summary: String(repeating: "Summaries wrap too. ", count: 10),
            options: [
                .value("fsync", placeholder: "MODE", help: String(repeating: "word ", count: 40)),
                .value("snapshot-interval-records", placeholder: "COUNT", help: "Records between snapshots."),
            ]
        )
        let lines = parser.helpText().split(separator: "\n")
        #expect(lines.allSatisfy { $0.count <= 80 })
        #expect(lines.contains("  --snapshot-interval-records=COUNT"))
        #expect(lines.contains { $0.hasPrefix("  --fsync=MODE") && $0.hasSuffix("word") })
        let continuation = lines.filter { $0.drop { $0 == " " }.hasPrefix("word") }
        #expect(!continuation.isEmpty)
        #expect(Set(continuation.map { $0.prefix { $0 == " " }.count }).count == 1)
    }
}
