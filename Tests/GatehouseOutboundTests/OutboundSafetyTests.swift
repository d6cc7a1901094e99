import GatehouseHTTP
import GatehouseOutbound
import GatehouseTesting
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The transport options that keep a request to a URL somebody else chose safe: schemes, the
/// connected address, certificates, bounded reads, and the time an exchange took.
@Suite struct OutboundSafetyTests {
    let client = OutboundHTTPClient()

    func send(_ request: OutboundRequest) async -> Result<OutboundResponse, OutboundError> {
        let result = await client.send(request)
        await client.close()
        return result
    }

    @Test func aSchemeOutsideTheRequestsSchemesIsRefusedUnsent() async throws {
        let server = try LoopbackHTTPServer { _ in .json(200, "{}") }
        defer { server.stop() }
        let result = await send(OutboundRequest(url: server.baseURL + "/", schemes: ["https"]))
        #expect(result.failure?.code == .invalidRequest, "\(result)")
        #expect(server.acceptedConnections == 0)
    }

    @Test(arguments: [[String](), ["ftp"], ["http", "file"]])
    func schemesOtherThanHTTPAndHTTPSAreAnInvalidRequest(schemes: [String]) async throws {
        let server = try LoopbackHTTPServer { _ in .json(200, "{}") }
        defer { server.stop() }
        let result = await send(OutboundRequest(url: server.baseURL + "/", schemes: schemes))
        #expect(result.failure?.code == .invalidRequest, "\(result)")
        #expect(server.acceptedConnections == 0)
    }

    /// `localhost` resolves to both ::1 and 127.0.0.1; `[::ffff:127.0.0.1]` is the IPv4-mapped
    /// form, connected through an IPv6 socket.
    @Test(arguments: ["127.0.0.1", "localhost", "[::ffff:127.0.0.1]"])
    func aLoopbackTargetIsRefusedUnderPublicOnly(host: String) async throws {
        let server = try LoopbackHTTPServer { _ in .json(200, "{}") }
        defer { server.stop() }
        let result = await send(OutboundRequest(url: "http://\(host):\(server.port)/", addressPolicy: .publicOnly))
        let failure = try #require(result.failure, "\(result)")
        #expect(failure.code == .addressRefused)
        #expect(failure.code.rawValue == "address_refused")
        #expect(failure.message.contains("loopback"))
        #expect(!failure.message.contains("127.0.0.1") && !failure.message.contains(String(server.port)))
        #expect(!failure.isTransient)
        #expect(server.acceptedConnections == 0)
    }

    @Test func theSameTargetIsReachedUnderAny() async throws {
        let server = try LoopbackHTTPServer { _ in .json(200, "{}") }
        defer { server.stop() }
        let result = await send(OutboundRequest(url: "http://[::ffff:127.0.0.1]:\(server.port)/", addressPolicy: .any))
        #expect(try result.get().status == 200)
    }

    @Test func aLongBodyIsCutAndTheStatusKeptWhenTheRequestDiscardsIt() async throws {
        let megabyte = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        let server = try LoopbackHTTPServer { _ in .respond(.json(202, megabyte)) }
        defer { server.stop() }
        let result = await send(OutboundRequest(url: server.baseURL + "/", responseBytesMax: 64 * 1024, discardsLongBodies: true))
        let response = try result.get()
        #expect(response.status == 202)
        #expect(response.body == Array(megabyte.prefix(64 * 1024)))
        #expect(response.headers["Content-Type"]?.hasPrefix("application/json") == true)
    }

    @Test func aLongChunkedBodyIsCutToo() async throws {
        let chunk = String(repeating: "y", count: 600)
        let raw = "HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\n\r\n258\r\n\(chunk)\r\n258\r\n\(chunk)\r\n0\r\n\r\n"
        let server = try LoopbackHTTPServer { _ in .raw(Array(raw.utf8)) }
        defer { server.stop() }
        let result = await send(OutboundRequest(url: server.baseURL + "/", responseBytesMax: 1000, discardsLongBodies: true))
        let response = try result.get()
        #expect(response.status == 500)
        #expect(response.body == Array(String(repeating: "y", count: 1000).utf8))
    }

    @Test func aShortBodyIsReadWholeWhenTheRequestDiscardsLongOnes() async throws {
        let server = try LoopbackHTTPServer { _ in .json(200, #"{"id":"x"}"#) }
        defer { server.stop() }
        let result = await send(OutboundRequest(url: server.baseURL + "/", responseBytesMax: 1000, discardsLongBodies: true))
        #expect(try result.get().body == Array(#"{"id":"x"}"#.utf8))
    }

    @Test func theResponseAndAFailedAttemptCarryTheirElapsedTime() async throws {
        let server = try LoopbackHTTPServer { request in
            request.path == "/drop" ? .drop : .json(200, "{}")
        }
        defer { server.stop() }
        let answered = await client.send(OutboundRequest(url: server.baseURL + "/"))
        let dropped = await client.send(OutboundRequest(url: server.baseURL + "/drop"))
        await client.close()
        #expect(try answered.get().elapsed > .zero)
        let failure = try #require(dropped.failure)
        #expect(failure.code == .connectionLost)
        #expect((failure.elapsed ?? .zero) > .zero)
    }

    /// A real TLS server (`openssl s_server`) with a self-signed certificate: `curl` trusting that
    /// certificate gets an answer, so the server works, and the client, trusting only the system's
    /// roots, refuses the handshake.
    @Test func aSelfSignedCertificateIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let certificate = directory.appending("cert.pem")
            let key = directory.appending("key.pem")
            let made = try await ChildProcess.run(
                ["timeout", "30", "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                 "-nodes", "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                 "-keyout", key, "-out", certificate],
                logs: directory.appending("openssl-req"))
            #expect(made.status == 0, "\(made)")
            let port = try closedPort()
            let server = try await ChildProcess.start(
                ["timeout", "60", "openssl", "s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate, "-key", key,
                 "-www", "-quiet"],
                logs: directory.appending("s_server"))
            let trusted = try await ChildProcess.run(
                ["timeout", "30", "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--retry", "20",
                 "--retry-connrefused", "--retry-delay", "1", "--cacert", certificate, "https://127.0.0.1:\(port)/"],
                logs: directory.appending("curl"))
            #expect(trusted.output == "200", "\(trusted)")
            let result = await send(OutboundRequest(url: "https://127.0.0.1:\(port)/"))
            server.signal(SIGTERM)
            _ = await server.finish()
            #expect(result.failure?.code == .tls, "\(result)")
        }
    }
}

/// The address classes, IPv4 and IPv6, on each side of every range's edge.
@Suite struct AddressClassTests {
    static let table: [(String, AddressClass)] = [
        ("8.8.8.8", .publicAddress), ("1.1.1.1", .publicAddress), ("93.184.216.34", .publicAddress),
        ("0.0.0.0", .unspecified), ("0.1.2.3", .unspecified),
        ("127.0.0.1", .loopback), ("127.255.255.254", .loopback),
        ("10.0.0.1", .privateAddress), ("10.255.255.255", .privateAddress), ("11.0.0.1", .publicAddress),
        ("172.15.255.255", .publicAddress), ("172.16.0.0", .privateAddress), ("172.31.255.255", .privateAddress),
        ("172.32.0.0", .publicAddress),
        ("192.168.0.1", .privateAddress), ("192.169.0.1", .publicAddress), ("192.167.255.255", .publicAddress),
        ("100.63.255.255", .publicAddress), ("100.64.0.0", .privateAddress), ("100.127.255.255", .privateAddress),
        ("100.128.0.0", .publicAddress),
        ("169.254.169.254", .linkLocal), ("169.253.0.1", .publicAddress), ("169.255.0.1", .publicAddress),
        ("223.255.255.255", .publicAddress), ("224.0.0.1", .multicast), ("239.255.255.255", .multicast),
        ("240.0.0.1", .publicAddress), ("255.255.255.255", .broadcast),
        ("::", .unspecified), ("::1", .loopback), ("::2", .unspecified), ("1::1", .publicAddress),
        ("2606:4700:4700::1111", .publicAddress), ("2001:db8::1", .publicAddress),
        ("fc00::1", .privateAddress), ("fdff:ffff::1", .privateAddress), ("fbff::1", .publicAddress), ("fe00::1", .publicAddress),
        ("fe80::1", .linkLocal), ("febf:ffff::1", .linkLocal), ("fec0::1", .publicAddress),
        ("ff02::1", .multicast), ("ff0e::1", .multicast),
        ("::ffff:127.0.0.1", .loopback), ("::ffff:10.1.2.3", .privateAddress), ("::ffff:169.254.169.254", .linkLocal),
        ("::ffff:8.8.8.8", .publicAddress), ("::ffff:0.0.0.0", .unspecified), ("::ffff:255.255.255.255", .broadcast),
        ("::127.0.0.1", .loopback), ("64:ff9b::a00:1", .privateAddress), ("64:ff9b::808:808", .publicAddress),
    ]

    @Test func everyAddressHasItsClass() throws {
        for (text, expected) in Self.table {
            let bytes = try #require(Self.bytes(of: text), "\(text) does not parse")
            #expect(AddressClass.of(bytes) == expected, "\(text)")
        }
    }

    @Test func onlyFourOrSixteenBytesAreAnAddress() {
        #expect(AddressClass.of([]) == nil)
        #expect(AddressClass.of([127, 0, 0]) == nil)
        #expect(AddressClass.of([UInt8](repeating: 0, count: 15)) == nil)
    }

    @Test func onlyPublicIsPublic() {
        #expect(AddressClass.allCases.filter(\.isPublic) == [.publicAddress])
    }

    private static func bytes(of text: String) -> [UInt8]? {
        var ipv4 = in_addr()
        if inet_pton(AF_INET, text, &ipv4) == 1 { return withUnsafeBytes(of: ipv4) { Array($0) } }
        var ipv6 = in6_addr()
        if inet_pton(AF_INET6, text, &ipv6) == 1 { return withUnsafeBytes(of: ipv6) { Array($0) } }
        return nil
    }
}
