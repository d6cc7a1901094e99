/// A small command-line parser for one (sub)command: a table of options in, typed lookups
/// and a typed error out. The caller dispatches subcommands and decides what to do with
/// `--help` and errors (print, exit 2); this type never prints and never exits.
///
/// Rules, in the spirit of GNU long options:
/// - `--name=value` and `--name value` both work. In the separate form a following argument
///   that starts with `--`, or is `-h`, is not taken as the value (`--data-dir --listen x` is
///   a missing value, not a directory called `--listen`); write `--name=--odd` for that.
/// - Flags take no value: `--test-clock=yes` is an error.
/// - Options may appear only once unless declared repeatable.
/// - `--` ends the options; everything after it is positional, even `--looks-like-this`.
/// - `-h` and `--help` set ``ParsedArguments/helpRequested``. Help wins over usage errors, so
///   `serve --bogus --help` still shows help rather than complaining about `--bogus`.
/// - Other arguments starting with `-` are unknown options, so a typo such as `-data-dir`
///   is reported rather than taken as a positional. A lone `-` is a positional.
public struct ArgumentParser: Sendable {
    /// The command as the user types it, such as `gatehouse serve`; used in usage and errors.
    public let command: String
    public let summary: String
    public let options: [OptionSpec]
    /// Usage text for positional arguments (`PROJECT [NAME...]`); nil when none are allowed.
    public let positionals: String?
    private let optionsByName: [String: OptionSpec]

    public init(command: String, summary: String, options: [OptionSpec], positionals: String? = nil) {
        for option in options { Self.checkDeclaration(option) }
        self.optionsByName = Dictionary(options.map { ($0.name, $0) }) { first, _ in
            preconditionFailure("option --\(first.name) is declared twice for \(command)")
        }
        self.command = command
        self.summary = summary
        self.options = options
        self.positionals = positionals
    }

    /// Parses the arguments after the command name (not `argv[0]`, not the subcommand).
    public func parse(_ arguments: [String]) throws(ArgumentError) -> ParsedArguments {
        do {
            var walk = Walk(parser: self, arguments: arguments)
            return try walk.run()
        } catch {
            if Self.containsHelpRequest(arguments) {
                return ParsedArguments(kinds: optionsByName.mapValues(\.kind), helpRequested: true)
            }
            throw error
        }
    }

    func option(named name: String) -> OptionSpec? {
        optionsByName[name]
    }

    func error(_ kind: ArgumentError.Kind) -> ArgumentError {
        ArgumentError(command: command, kind: kind)
    }

    /// The closest declared option to a misspelt one, if it is close enough to be a typo.
    func suggestion(for name: String) -> String? {
        let candidates = options.map(\.name) + ["help"]
        let scored = candidates.map { (name: $0, distance: editDistance(name, $0)) }
        guard let best = scored.min(by: { $0.distance < $1.distance }) else { return nil }
        return best.distance <= min(2, max(1, best.name.count / 3)) ? "--" + best.name : nil
    }

    private static func containsHelpRequest(_ arguments: [String]) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "-h" || argument == "--help" { return true }
        }
        return false
    }

    // Declarations are written by us, not typed by users, so mistakes are programming errors.
    private static func checkDeclaration(_ option: OptionSpec) {
        precondition(!option.name.isEmpty, "an option needs a name")
        precondition(!option.name.hasPrefix("-"), "declare --\(option.name) without the dashes")
        precondition(!option.name.contains("=") && !option.name.contains(" "), "bad option name \(option.name)")
        precondition(option.name != "help", "--help is built in")
        if case .value(let placeholder) = option.kind {
            precondition(!placeholder.isEmpty, "--\(option.name) needs a placeholder")
        }
    }
}

// MARK: - Walking the arguments

extension ArgumentParser {
    /// One left-to-right pass over the arguments, accumulating what it finds.
    fileprivate struct Walk {
        let parser: ArgumentParser
        let arguments: [String]
        var index = 0
        var values: [String: [String]] = [:]
        var flags: Set<String> = []
        var positionals: [String] = []
        var helpRequested = false

        init(parser: ArgumentParser, arguments: [String]) {
            self.parser = parser
            self.arguments = arguments
        }

        mutating func run() throws(ArgumentError) -> ParsedArguments {
            while index < arguments.count {
                let argument = arguments[index]
                index += 1
                if argument == "--" {
                    try addPositionals(arguments[index...])
                    break
                }
                try handle(argument)
            }
            return ParsedArguments(
                kinds: parser.optionsByName.mapValues(\.kind),
                values: values,
                flags: flags,
                positionals: positionals,
                helpRequested: helpRequested
            )
        }

        private mutating func handle(_ argument: String) throws(ArgumentError) {
            if argument == "-h" || argument == "--help" {
                helpRequested = true
            } else if argument.hasPrefix("--") {
                try handleOption(argument)
            } else if argument.hasPrefix("-") && argument != "-" {
                // `-data-dir=x` is most likely `--data-dir=x` with a dash missing.
                let name = String(argument.dropFirst().prefix { $0 != "=" })
                throw parser.error(.unknownOption(argument, suggestion: parser.suggestion(for: name)))
            } else {
                try addPositionals(CollectionOfOne(argument))
            }
        }

        private mutating func handleOption(_ argument: String) throws(ArgumentError) {
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inlineValue = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
            guard let option = parser.option(named: name) else {
                if name == "help" { throw parser.error(.valueForFlag("help")) }
                throw parser.error(.unknownOption(argument, suggestion: parser.suggestion(for: name)))
            }
            guard option.repeatable || (values[name] == nil && !flags.contains(name)) else {
                throw parser.error(.repeatedOption(name))
            }
            switch option.kind {
            case .flag:
                guard inlineValue == nil else { throw parser.error(.valueForFlag(name)) }
                flags.insert(name)
            case .value:
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    value = try takeSeparateValue(for: name)
                }
                values[name, default: []].append(value)
            }
        }

        private mutating func takeSeparateValue(for name: String) throws(ArgumentError) -> String {
            guard index < arguments.count, Self.canBeSeparateValue(arguments[index]) else {
                throw parser.error(.missingValue(option: name))
            }
            defer { index += 1 }
            return arguments[index]
        }

        private static func canBeSeparateValue(_ argument: String) -> Bool {
            !argument.hasPrefix("--") && argument != "-h"
        }

        private mutating func addPositionals(_ found: some Collection<String>) throws(ArgumentError) {
            if parser.positionals == nil, let first = found.first {
                throw parser.error(.unexpectedPositional(first))
            }
            positionals.append(contentsOf: found)
        }
    }
}

// MARK: - Help

extension ArgumentParser {
    private static let lineWidth = 80
    private static let optionColumnMax = 28

    /// Usage, summary and one aligned line per option, like a well-made Unix tool:
    ///
    ///     usage: gatehouse serve [options]
    ///
    ///     Run the server.
    ///
    ///     options:
    ///       --data-dir=DIR  Directory for the log and snapshots.
    ///       --test-clock    Let tests move the clock.
    ///       -h, --help      show this help and exit
    public func helpText() -> String {
        var lines = ["usage: \(command) [options]" + (positionals.map { " " + $0 } ?? "")]
        if !summary.isEmpty {
            lines += [""] + Self.layOut(summary: summary)
        }
        lines += ["", "options:"]
        let rows = options.map(HelpRow.init(option:)) + [HelpRow(left: "-h, --help", help: "show this help and exit")]
        // Two spaces of indent, the widest option that fits the cap, two spaces of gap.
        let widest = rows.map(\.left.count).filter { $0 <= Self.optionColumnMax }.max() ?? 0
        let column = widest + 4
        for row in rows {
            lines += Self.format(row, column: column)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private struct HelpRow {
        let left: String
        let help: String

        init(left: String, help: String) {
            self.left = left
            self.help = help
        }

        init(option: OptionSpec) {
            switch option.kind {
            case .flag: left = "--" + option.name
            case .value(let placeholder): left = "--" + option.name + "=" + placeholder
            }
            help = option.repeatable ? option.help + " (repeatable)" : option.help
        }
    }

    /// The option at two spaces, its help wrapped at `column`; an option too long for the
    /// column gets its help on the following lines instead of pushing every row right.
    private static func format(_ row: HelpRow, column: Int) -> [String] {
        let option = "  " + row.left
        guard !row.help.isEmpty else { return [option] }
        let indent = String(repeating: " ", count: column)
        let wrapped = breakLine(Array(row.help), width: lineWidth - column, hangingIndent: 0)
        var lines: [String]
        if option.count + 2 <= column {
            lines = [option + String(repeating: " ", count: column - option.count) + wrapped[0]]
        } else {
            lines = [option, indent + wrapped[0]]
        }
        lines += wrapped.dropFirst().map { indent + $0 }
        return lines
    }

    /// The summary as written, except that lines too long for the terminal are broken at
    /// spaces. Authors lay summaries out by hand (a table of subcommands, say), so lines that
    /// fit keep their indentation and inner spacing; a broken line continues under its
    /// second column when it has one (text after a run of two or more spaces), else under
    /// its own indentation.
    private static func layOut(summary: String) -> [String] {
        summary.split(separator: "\n", omittingEmptySubsequences: false).flatMap { line in
            let characters = Array(line)
            return breakLine(characters, width: lineWidth, hangingIndent: secondColumn(of: characters))
        }
    }

    /// Splits `line` at spaces into pieces of at most `width` characters, every piece after
    /// the first indented by `hangingIndent`. A word longer than the room stays whole.
    private static func breakLine(_ line: [Character], width: Int, hangingIndent: Int) -> [String] {
        let hang = String(repeating: " ", count: hangingIndent)
        var pieces: [String] = []
        var prefix = ""
        var rest = line[...]
        while prefix.count + rest.count > width, let cut = breakPoint(in: rest, room: width - prefix.count) {
            let piece = rest[..<cut]
            let end = piece.lastIndex { $0 != " " }.map { $0 + 1 } ?? cut
            pieces.append(prefix + String(piece[..<end]))
            rest = rest[cut...].drop { $0 == " " }
            prefix = hang
        }
        pieces.append(prefix + String(rest))
        return pieces
    }

    /// The last space within `room` after the text starts, else the first space after it.
    private static func breakPoint(in text: ArraySlice<Character>, room: Int) -> Int? {
        guard let textStart = text.firstIndex(where: { $0 != " " }) else { return nil }
        let fitting = text[textStart..<min(text.startIndex + room + 1, text.endIndex)]
        return fitting.lastIndex(of: " ") ?? text[textStart...].firstIndex(of: " ")
    }

    /// Where the text after the first run of two or more inner spaces starts (the description
    /// column of a hand-made table), or the line's indentation when there is none.
    private static func secondColumn(of line: [Character]) -> Int {
        let indentation = line.prefix { $0 == " " }.count
        var spaces = 0
        for (index, character) in line.enumerated().dropFirst(indentation) {
            if character != " " && spaces >= 2 {
                // A column too far right would leave continuation lines no room.
                return index <= lineWidth - 20 ? index : indentation
            }
            spaces = character == " " ? spaces + 1 : 0
        }
        return indentation
    }
}

/// Edit distance counting a swap of neighbours as one edit (optimal string alignment), since
/// `--hepl` and `--lsiten` are the typos people make. Option names are short, so the full
/// table is cheap.
private func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { table[i][0] = i }
    for j in 0...b.count { table[0][j] = j }
    for i in stride(from: 1, through: a.count, by: 1) {
        for j in stride(from: 1, through: b.count, by: 1) {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
            }
        }
    }
    return table[a.count][b.count]
}

// MARK: - Declarations and results

/// One option a command accepts, declared without its leading dashes (`data-dir`).
public struct OptionSpec: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// Takes a value; the placeholder names it in help (`DIR`, `ADDRESS`).
        case value(placeholder: String)
        /// Present or absent, no value.
        case flag
    }

    public let name: String
    public let kind: Kind
    public let help: String
    /// Whether the option may be given more than once; values accumulate in order.
    public let repeatable: Bool

    public init(name: String, kind: Kind, help: String, repeatable: Bool = false) {
        self.name = name
        self.kind = kind
        self.help = help
        self.repeatable = repeatable
    }

    public static func value(
        _ name: String,
        placeholder: String,
        help: String,
        repeatable: Bool = false
    ) -> OptionSpec {
        OptionSpec(name: name, kind: .value(placeholder: placeholder), help: help, repeatable: repeatable)
    }

    public static func flag(_ name: String, help: String) -> OptionSpec {
        OptionSpec(name: name, kind: .flag, help: help)
    }
}

/// What ``ArgumentParser/parse(_:)`` found.
///
/// Asking for an option the parser does not declare, or asking for a flag's value, is a
/// programming error and stops the process: a misspelt name in code would otherwise read as
/// "not given" forever.
public struct ParsedArguments: Sendable {
    public let positionals: [String]
    /// `-h` or `--help` appeared before `--`. When it is set after a usage error, the other
    /// fields are empty: show help and stop.
    public let helpRequested: Bool
    private let kinds: [String: OptionSpec.Kind]
    private let valuesByName: [String: [String]]
    private let flags: Set<String>

    init(
        kinds: [String: OptionSpec.Kind],
        values: [String: [String]] = [:],
        flags: Set<String> = [],
        positionals: [String] = [],
        helpRequested: Bool
    ) {
        self.kinds = kinds
        self.valuesByName = values
        self.flags = flags
        self.positionals = positionals
        self.helpRequested = helpRequested
    }

    /// The option's value, or nil if it was not given; for a repeatable option, the last one.
    public func value(_ name: String) -> String? {
        values(name).last
    }

    /// Every value given for the option, in command-line order.
    public func values(_ name: String) -> [String] {
        guard case .value = kinds[name] else { preconditionFailure("--\(name) is not a declared value option") }
        return valuesByName[name] ?? []
    }

    public func flag(_ name: String) -> Bool {
        guard kinds[name] == .flag else { preconditionFailure("--\(name) is not a declared flag") }
        return flags.contains(name)
    }
}

/// A usage error: what was wrong (``kind``, stable for tests and callers) and for which command.
public struct ArgumentError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The argument as typed, and the declared option it most resembles.
        case unknownOption(String, suggestion: String?)
        /// A value option at the end of the arguments, or followed by another option.
        case missingValue(option: String)
        /// A non-repeatable option given twice.
        case repeatedOption(String)
        /// `--flag=value`.
        case valueForFlag(String)
        /// A positional argument where the command takes none.
        case unexpectedPositional(String)
    }

    public let command: String
    public let kind: Kind

    public init(command: String, kind: Kind) {
        self.command = command
        self.kind = kind
    }

    /// The problem alone, such as `unknown option '--dta-dir' (did you mean '--data-dir'?)`.
    public var message: String {
        switch kind {
        case .unknownOption(let argument, let suggestion?):
            "unknown option '\(argument)' (did you mean '\(suggestion)'?)"
        case .unknownOption(let argument, nil):
            "unknown option '\(argument)'"
        case .missingValue(let option):
            "option '--\(option)' needs a value"
        case .repeatedOption(let option):
            "option '--\(option)' may be given only once"
        case .valueForFlag(let option):
            "option '--\(option)' does not take a value"
        case .unexpectedPositional(let argument):
            "unexpected argument '\(argument)'"
        }
    }

    /// `gatehouse serve: unknown option '--bogus'`, for an `error: …` line on stderr.
    public var description: String {
        "\(command): \(message)"
    }

    /// The conventional second line after a usage error.
    public var hint: String {
        "Try '\(command) --help' for more information."
    }
}
