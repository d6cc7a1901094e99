import Foundation
import GatehousePosix
import GatehouseTesting
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `ops/haproxy.cfg` run by the real HAProxy (Debian `haproxy`, which CI installs) in front of
/// the real server: TLS terminated with a throwaway certificate, and requests through it
/// reaching Gatehouse on both listeners. A machine without `haproxy`, `curl` or `openssl`
/// fails these tests rather than skipping them.
@Suite struct HAProxy {
    @Test func healthzThroughTheProxyAnswersOkWithTheClientsRequestId() async throws {
        try await withProxiedServer { proxy in
            let answer = try await proxy.curl(["-H", "X-Request-Id: abc", proxy.https("/healthz")])
            #expect(answer.status == 200, "\(answer)")
            #expect(answer.header("X-Request-Id") == "abc", "\(answer)")
            #expect(answer.body == #"{"status":"ok"}"#)
        }
    }

    @Test func anOpThroughTheProxyRunsWithTheBearerKeyAndNotWithout() async throws {
        try await withProxiedServer { proxy in
            let ping = ["-H", "Content-Type: application/json", "--data-binary", #"{"op":"ping"}"#, proxy.https("/v1/op")]
            let answer = try await proxy.curl(["-H", "Authorization: Bearer \(TestServer.adminKey)"] + ping)
            #expect(answer.status == 200, "\(answer)")
            #expect(answer.body.hasPrefix(#"{"id":null,"ok":true,"time_ms":"#), "\(answer)")

            let refused = try await proxy.curl(ping)
            #expect(refused.status == 401, "\(refused)")
            #expect(refused.body.contains(#""code":"unauthenticated""#), "\(refused)")
        }
    }

    /// `openssl s_client` sends the lines and reads until the server closes the connection,
    /// which the server does once it has been idle for its `--idle-timeout`.
    @Test func theLineProtocolThroughTheProxySaysHelloAndPings() async throws {
        try await withProxiedServer(serverArguments: ["--idle-timeout=1"]) { proxy in
            let lines = #"{"id":1,"op":"hello","key":"\#(TestServer.adminKey)"}"# + "\n" + #"{"id":2,"op":"ping"}"# + "\n"
            let input = proxy.directory.appending("line-input")
            try await TestFiles.write(Data(lines.utf8), to: input)
            let session = try await ChildProcess.run(
                ["timeout", "30", "openssl", "s_client", "-quiet", "-connect", "127.0.0.1:\(proxy.linePort)",
                 "-servername", "localhost", "-verify_hostname", "localhost", "-CAfile", proxy.certificate,
                 "-verify_return_error"],
                input: input, logs: proxy.directory.appending("s_client"))
            let answers = session.output.split(separator: "\n")
            #expect(answers.count == 2, "\(session)")
            #expect(answers.first?.hasPrefix(#"{"id":1,"ok":true,"role":"admin""#) == true, "\(session)")
            #expect(answers.last?.hasPrefix(#"{"id":2,"ok":true,"time_ms":"#) == true, "\(session)")
        }
    }
}

// MARK: The server behind HAProxy

/// A running server with HAProxy in front of it, on ports of its own.
private struct ProxiedServer {
    let directory: TemporaryDirectory
    let server: ServerProcess
    /// The self-signed certificate clients trust (for `localhost` and 127.0.0.1).
    let certificate: String
    let httpsPort: UInt16
    let linePort: UInt16

    func https(_ path: String) -> String {
        "https://localhost:\(httpsPort)\(path)"
    }

    /// `curl` through the proxy, checking the certificate; `localhost` is pinned to 127.0.0.1,
    /// where HAProxy listens.
    func curl(_ arguments: [String]) async throws -> HTTPAnswer {
        let result = try await ChildProcess.run(
            ["timeout", "30", "curl", "-sS", "-i", "--cacert", certificate, "--resolve", "localhost:\(httpsPort):127.0.0.1"]
                + arguments,
            logs: directory.appending("curl-\(UUID().uuidString)"))
        guard result.status == 0 else { throw ProxyTestError(description: "curl exited with \(result.status): \(result)") }
        return try HTTPAnswer(parsing: result.output)
    }
}

/// Starts the server (with `serverArguments`) and HAProxy on `ops/haproxy.cfg`, runs `body`, and
/// stops both by pid, also when `body` throws.
private func withProxiedServer(serverArguments: [String] = [], _ body: (ProxiedServer) async throws -> Void) async throws {
    try await withTemporaryDirectory(prefix: "gatehouse-haproxy") { directory in
        let pem = try await makeCertificate(in: directory)
        let server = try await ServerProcess.start(dataDirectory: directory.appending("data"), extraArguments: serverArguments)
        var haproxy: ChildProcess?
        do {
            let http = try #require(server.httpAddress, "no `http on` line in \(server.banner)")
            let ports = try await offThePool { try freePorts(2) }
            let shipped = try await offThePool { try String(contentsOfFile: shippedConfiguration, encoding: .utf8) }
            let configuration = try proxyConfiguration(from: shipped, https: ports[0], line: ports[1],
                                                       server: server.address, http: http, pem: pem.combined)
            let path = directory.appending("haproxy.cfg")
            try await TestFiles.write(Data(configuration.utf8), to: path)
            // `timeout` bounds it even if this test process dies before stopping it.
            let started = try await ChildProcess.start(["timeout", "120", "haproxy", "-db", "-f", path],
                                                       logs: directory.appending("haproxy"))
            haproxy = started
            for port in ports { try await waitUntilAccepting(port: port, while: started) }
            try await body(ProxiedServer(directory: directory, server: server, certificate: pem.certificate,
                                         httpsPort: ports[0], linePort: ports[1]))
        } catch {
            await stop(haproxy, server)
            throw error
        }
        let (proxyStatus, serverStatus) = await stop(haproxy, server)
        // `timeout` answers 124 when its time ran out, which would mean the proxy outlived the test.
        #expect(proxyStatus != 124)
        #expect(serverStatus == 0)
    }
}

@discardableResult
private func stop(_ haproxy: ChildProcess?, _ server: ServerProcess) async -> (proxy: Int32?, server: Int32) {
    haproxy?.signal(SIGTERM)
    let proxyStatus = await haproxy?.finish().status
    return (proxyStatus, await server.stop().status)
}

/// ops/haproxy.cfg in this checkout, found from this file's path.
private let shippedConfiguration = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("ops/haproxy.cfg").path

/// The shipped configuration with the test's addresses and certificate. Every text replaced
/// must be there, so a change to the shipped file that this would silently miss fails the test.
private func proxyConfiguration(from shipped: String, https: UInt16, line: UInt16, server: HostPort, http: HostPort,
                        pem: String) throws -> String
{
    let replacements = [
        ("/etc/haproxy/certs/gatehouse.pem", pem),
        ("bind :443 ", "bind 127.0.0.1:\(https) "),
        ("bind :7443 ", "bind 127.0.0.1:\(line) "),
        ("127.0.0.1:7412", "\(http)"),
        ("127.0.0.1:7411", "\(server)"),
        ("check port 7412", "check port \(http.port)"),
        // HAProxy's log goes to its standard error, which a failing test shows.
        ("log /dev/log local0", "log stderr format raw local0"),
        // The shipped limit needs more descriptors than an unprivileged (or containerised)
        // process may raise its limit to.
        ("maxconn 20000", "maxconn 1000"),
    ]
    var text = shipped
    for (old, new) in replacements {
        guard text.contains(old) else { throw ProxyTestError(description: "ops/haproxy.cfg no longer contains \(old)") }
        text = text.replacingOccurrences(of: old, with: new)
    }
    // What only a system install can do: a chroot, dropping to the haproxy user, the runtime
    // socket under /run.
    let systemOnly = ["chroot ", "user ", "group ", "stats socket "]
    return text.split(separator: "\n", omittingEmptySubsequences: false)
        .filter { line in !systemOnly.contains { line.trimmingCharacters(in: .whitespaces).hasPrefix($0) } }
        .joined(separator: "\n")
}

/// A self-signed P-256 certificate for `localhost` and 127.0.0.1, made by the `openssl` CLI:
/// the certificate alone (for clients) and with its key (HAProxy's combined PEM).
private func makeCertificate(in directory: TemporaryDirectory) async throws -> (certificate: String, combined: String) {
    let certificate = directory.appending("cert.pem")
    let key = directory.appending("key.pem")
    let made = try await ChildProcess.run(
        ["timeout", "30", "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
         "-keyout", key, "-out", certificate],
        logs: directory.appending("openssl"))
    guard made.status == 0 else { throw ProxyTestError(description: "openssl req failed: \(made)") }
    let combined = directory.appending("gatehouse.pem")
    try await offThePool {
        let pem = try String(contentsOfFile: certificate, encoding: .utf8) + String(contentsOfFile: key, encoding: .utf8)
        try pem.write(toFile: combined, atomically: false, encoding: .utf8)
    }
    return (certificate, combined)
}

/// Ports nothing listens on now: bound to port 0 and closed again. HAProxy cannot report a
/// port it picked itself.
private func freePorts(_ count: Int) throws -> [UInt16] {
    let sockets = try (0..<count).map { _ in try Socket.listen(on: SocketAddress.resolve(HostPort(host: "127.0.0.1", port: 0))) }
    defer { for socket in sockets { socket.close() } }
    return try sockets.map { try $0.localAddress().port }
}

/// Waits until HAProxy accepts on `port`, failing at once if it exits (a configuration it
/// refuses) and after 10 s if it never listens.
private func waitUntilAccepting(port: UInt16, while haproxy: ChildProcess) async throws {
    let address = try SocketAddress.resolve(HostPort(host: "127.0.0.1", port: port))
    for _ in 0..<200 {
        let accepted = await offThePool { () -> Bool in
            guard let socket = try? Socket.connect(to: address) else { return false }
            socket.close()
            return true
        }
        if accepted { return }
        if haproxy.hasExited() {
            let result = await haproxy.finish()
            // 127 is `timeout` not finding the program.
            let hint = result.status == 127 ? " (not installed? apt-get install haproxy)" : ""
            throw ProxyTestError(description: "haproxy exited with \(result.status)\(hint): \(result.errors)")
        }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw ProxyTestError(description: "haproxy never accepted on port \(port)")
}

// MARK: Answers and child processes

/// What `curl -i` printed: the status line, headers and body of the last answer.
private struct HTTPAnswer: CustomStringConvertible {
    let status: Int
    let headers: [(name: String, value: String)]
    let body: String

    init(parsing output: String) throws {
        guard let end = output.range(of: "\r\n\r\n") else { throw ProxyTestError(description: "no headers in \(output)") }
        let lines = output[..<end.lowerBound].components(separatedBy: "\r\n")
        let statusLine = lines[0].split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw ProxyTestError(description: "no status in \(output)")
        }
        self.status = status
        headers = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        body = String(output[end.upperBound...])
    }

    /// The first header of that name, compared without case (HTTP/2 sends them in lower case).
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var description: String {
        "\(status) \(headers.map { "\($0.name): \($0.value)" }.joined(separator: "; ")) \(body)"
    }
}

private struct ProxyTestError: Error, CustomStringConvertible {
    let description: String
}
