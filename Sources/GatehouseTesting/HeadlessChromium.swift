import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's Chromium (`/usr/bin/chromium`, from scripts/install-packages.sh), headless, for
/// checking the pages a web buyer opens in a real browser: the DOM it builds from them and how
/// they look. Each call is one browser with a profile of its own in a temporary directory, given
/// ``timeout`` to finish and then killed by its pid; every wait runs off the concurrency pool.
public struct HeadlessChromium: Sendable {
    public static let executable = "/usr/bin/chromium"

    public static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: executable)
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Whether pages may run scripts. The buyer's pages must work without.
    public var javaScript: Bool
    public var timeout: Duration

    public init(javaScript: Bool = false, timeout: Duration = .seconds(60)) {
        self.javaScript = javaScript
        self.timeout = timeout
    }

    /// The `file://` URL of a local file.
    public static func fileURL(_ path: String) -> String {
        URL(fileURLWithPath: path).absoluteString
    }

    /// The DOM the browser built from `url`, serialized, as a phone of 390 × 844 points sees it.
    public func dumpDOM(url: String) async throws -> String {
        try await withTemporaryDirectory(prefix: "gh-chromium") { directory in
            try await run(["--dump-dom", "--window-size=390,844", url], in: directory).output
        }
    }

    /// The DOM of `url` as elements to query.
    public func elements(url: String) async throws -> DOMElements {
        try await DOMElements(html: dumpDOM(url: url))
    }

    /// A PNG of the `width` × `height` viewport showing `url`, written to `path`.
    public func screenshot(url: String, to path: String, width: Int = 390, height: Int = 844) async throws {
        _ = try await withTemporaryDirectory(prefix: "gh-chromium") { directory in
            try await run(["--screenshot=\(path)", "--window-size=\(width),\(height)", "--hide-scrollbars", url], in: directory)
        }
        guard await offThePool({ FileManager.default.fileExists(atPath: path) }) else {
            throw Failure(description: "chromium wrote no screenshot to \(path)")
        }
    }

    private func run(_ arguments: [String], in directory: TemporaryDirectory) async throws -> (output: String, errors: String) {
        let profile = directory.appending("profile")
        try await offThePool { [javaScript] in try Self.makeProfile(at: profile, javaScript: javaScript) }
        let command = [
            Self.executable, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile)", "--no-first-run",
            "--disable-extensions", "--disable-background-networking",
        ] + arguments
        let browser = try await ChildProcess.start(command, logs: directory.appending("chromium"))
        let finished = await offThePool { [timeout] in Self.waitForExit(browser, timeout: timeout) }
        let (status, output, errors) = await browser.finish()
        guard finished else { throw Failure(description: "chromium took longer than \(timeout) and was killed: \(errors)") }
        guard status == 0 else { throw Failure(description: "chromium exited with status \(status): \(errors)") }
        return (output, errors)
    }

    /// A profile whose content settings block page scripts when `javaScript` is off.
    /// `--blink-settings=scriptEnabled=false` would be the flag, but it also stops the headless
    /// browser's own `--dump-dom` and `--screenshot`, which then write nothing; the content setting
    /// applies to the page alone.
    private static func makeProfile(at path: String, javaScript: Bool) throws {
        try FileManager.default.createDirectory(atPath: path + "/Default", withIntermediateDirectories: true)
        let preferences = #"{"profile":{"default_content_setting_values":{"javascript":\#(javaScript ? 1 : 2)}}}"#
        try Data(preferences.utf8).write(to: URL(fileURLWithPath: path + "/Default/Preferences"))
    }

    /// Waits for `browser` to exit; kills it once `timeout` has passed and answers `false`.
    private static func waitForExit(_ browser: ChildProcess, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !browser.hasExited() {
            guard ContinuousClock.now < deadline else {
                browser.signal(SIGKILL)
                return false
            }
            usleep(20_000)
        }
        return true
    }
}

/// The elements of a dumped DOM in document order, read by Python's html.parser
/// (Tests/Support/dom_elements.py), with the queries the page tests ask.
public struct DOMElements: Sendable {
    public struct Element: Sendable, Decodable {
        public let tag: String
        public let attributes: [String: String]
        /// The text of the element and everything in it.
        public let text: String
    }

    public let all: [Element]

    public init(html: String) async throws {
        all = try await withTemporaryDirectory(prefix: "gh-dom") { directory in
            let page = directory.appending("dom.html")
            try await TestFiles.write(Data(html.utf8), to: page)
            let (status, output, errors) = try await ChildProcess.run(["python3", Self.scriptPath, page], logs: directory.appending("python"))
            guard status == 0 else { throw HeadlessChromium.Failure(description: "dom_elements.py exited with status \(status): \(errors)") }
            return try JSONDecoder().decode([Element].self, from: Data(output.utf8))
        }
    }

    public func element(id: String) -> Element? {
        all.first { $0.attributes["id"] == id }
    }

    public func elements(tag: String) -> [Element] {
        all.filter { $0.tag == tag }
    }

    /// The text of `id`, with runs of white space made single spaces.
    public func text(id: String) -> String? {
        element(id: id).map { $0.text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
    }

    /// Tests/Support/dom_elements.py in this checkout, found from this file's path.
    private static let scriptPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Support/dom_elements.py").path
}
