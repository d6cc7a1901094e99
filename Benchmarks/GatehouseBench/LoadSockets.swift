import GatehousePosix
import GatehouseWire

/// The load connections' sockets and the request each repeats, once setup is done: the setup
/// sessions' own sockets for a line op; for an HTTP op, a new connection each to the HTTP
/// listener, and the setup sessions closed, so the server holds as many connections as asked.
enum LoadSockets {
    case line([(descriptor: Int32, template: RequestTemplate)])
    case http([(socket: Socket, template: HTTPRequestTemplate)])

    /// `variables[i]` is what connection i's setup made.
    init(_ op: BenchOp, key: String, project: BenchProject, sessions: [BenchSession], variables: [[String: JSONValue]],
         target: BenchTarget) throws(BenchFailure)
    {
        let verbatim = ["bench_project": project.id]
        guard case .http(let method, let path, let authorized) = op.transport else {
            var line: [(descriptor: Int32, template: RequestTemplate)] = []
            for (session, variables) in zip(sessions, variables) {
                line.append((session.client.socket.descriptor, try RequestTemplate(op.request, variables: variables, verbatim: verbatim)))
                session.client.socket.setNonBlocking()
            }
            self = .line(line)
            return
        }
        guard let address = target.httpAddress else {
            throw .usage("\(op.name) needs the server's HTTP address: --http-connect HOST:PORT with --connect")
        }
        var templates: [HTTPRequestTemplate] = []
        for variables in variables {
            let body = op.request.isEmpty
                ? nil : try RequestTemplate(op.request, variables: variables, verbatim: verbatim, endsWithNewline: false)
            templates.append(try HTTPRequestTemplate(method: method, path: path, host: address,
                                                     bearer: authorized ? key : nil, body: body))
        }
        for session in sessions { session.close() }
        self = .http(try Self.connect(to: address, templates))
    }

    private static func connect(to address: HostPort, _ templates: [HTTPRequestTemplate])
        throws(BenchFailure) -> [(socket: Socket, template: HTTPRequestTemplate)]
    {
        var connected: [(socket: Socket, template: HTTPRequestTemplate)] = []
        for template in templates {
            do {
                let socket = try Socket.connect(to: SocketAddress.resolve(address))
                socket.setNonBlocking()
                connected.append((socket, template))
            } catch {
                for (socket, _) in connected { socket.close() }
                throw BenchFailure("cannot connect to the HTTP listener at \(address): \(error)")
            }
        }
        return connected
    }

    /// One load connection per socket, spread over `loops` in turn.
    func connections(pipeline: Int, loops: [EventLoop], tallies: [LoadTally], timeline: LoadTimeline) -> [any LoadDriver] {
        switch self {
        case .line(let line):
            line.indices.map { index in
                LoadConnection(
                    loop: loops[index % loops.count], tally: tallies[index % loops.count], descriptor: line[index].descriptor,
                    requests: line[index].template, answers: LineAnswerReader(), pipeline: pipeline, index: index,
                    connections: line.count, timeline: timeline
                )
            }
        case .http(let http):
            http.indices.map { index in
                LoadConnection(
                    loop: loops[index % loops.count], tally: tallies[index % loops.count], descriptor: http[index].socket.descriptor,
                    requests: http[index].template, answers: HTTPAnswerReader(), pipeline: pipeline, index: index,
                    connections: http.count, timeline: timeline
                )
            }
        }
    }

    /// Closes the HTTP sockets; the line ones are their sessions'.
    func close() {
        guard case .http(let http) = self else { return }
        for (socket, _) in http { socket.close() }
    }
}
