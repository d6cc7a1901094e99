/// Which of the server's listeners an op's load connections talk to.
enum BenchTransport: Sendable {
    /// The line protocol: `hello` with the op's key, then the request as one line.
    case line
    /// HTTP/1.1 on the server's HTTP listener (docs/http.md): `method path`, the op's request
    /// (when not empty) as the body, and `Authorization: Bearer` with the op's key when
    /// `authorized`. Setup still runs over the line, as for a line op.
    case http(method: String, path: String, authorized: Bool)

    var isHTTP: Bool {
        if case .http = self { true } else { false }
    }
}
