import GatehouseCore
import GatehouseRuntime
import GatehouseStorage
import GatehouseWire

/// What became of a request read on the loop thread.
enum LineOutcome {
    /// Answered on the spot: errors, `hello`, and operations cheap enough for the loop thread.
    case answer([UInt8], RequestTally)
    /// To be run after the connection's earlier requests (``ServerCore/route(_:_:session:)``
    /// says how, once those that could change the session have run).
    case deferred(Request, Operation)
}

/// How a deferred request runs.
enum RequestRoute {
    /// Answered already: refused before it ran (bad fields, a role that may not run it).
    case answer([UInt8], ErrorCode)
    /// A project op's step, for the project's lane.
    case lane(ProjectLane, Principal, ProjectStep)
    /// On the connection's inbox.
    case inbox
}

/// What a request run on an inbox came to: its answer, or the error, and the log position that
/// must be durable before either is sent.
struct RunOutcome: Sendable {
    let requestID: JSONValue
    let result: Result<Reply, GatehouseError>
    let durableAt: LSN?

    var code: ErrorCode? {
        if case .failure(let error) = result { return error.code }
        return nil
    }

    /// The answer line (`\n` included).
    var answer: [UInt8] {
        switch result {
        case .success(let reply): Answer.success(id: requestID, reply.result)
        case .failure(let error): Answer.failure(id: requestID, error)
        }
    }
}

extension ServerCore {
    /// Handles one request object on the loop thread: a line, or the body of an HTTP `POST
    /// /v1/op` (`heldConnection` false, which refuses the ops that need one). `canRunInline` is
    /// true when no earlier request of the connection is still running, so the session cannot
    /// change under this one.
    func handleLine(_ line: UnsafeRawBufferPointer, session: Session, canRunInline: Bool, heldConnection: Bool = true)
        -> LineOutcome
    {
        if canRunInline, let answer = quickSync(line, session: session) { return .answer(answer, syncTally) }
        let request: Request
        do {
            request = try Request(line: line)
        } catch {
            return .answer(Answer.failure(id: error.id, error.error), .other(error.error.code))
        }
        guard let operation = operations[request.op] else {
            return .answer(Answer.failure(id: request.id, unknownOp(request.op)), .other(.unknownOp))
        }
        if operation.needsHeldConnection, !heldConnection {
            let error = GatehouseError(.badRequest, "\(operation.name) needs a connection held open: the line protocol (PROTOCOL.md)")
            return .answer(Answer.failure(id: request.id, error), RequestTally(op: operation.number, code: error.code))
        }
        guard canRunInline else { return .deferred(request, operation) }
        switch operation.body {
        case .session(let body):
            return answer(request, operation) { () throws(GatehouseError) in try body(request, session, self) }
        case .inline(let body):
            return answer(request, operation) { () throws(GatehouseError) in
                try body(OperationContext(request: request, principal: try authorize(operation, session), core: self, session: session))
            }
        case .async:
            do {
                _ = try authorize(operation, session)
            } catch {
                return .answer(Answer.failure(id: request.id, error), RequestTally(op: operation.number, code: error.code))
            }
            return .deferred(request, operation)
        case .project:
            return .deferred(request, operation)
        case .fast(let inline, _):
            do {
                let context = OperationContext(request: request, principal: try authorize(operation, session), core: self, session: session)
                guard let result = try inline(context) else { return .deferred(request, operation) }
                return .answer(Answer.success(id: request.id, result), RequestTally(op: operation.number, code: nil))
            } catch {
                return .answer(Answer.failure(id: request.id, error), RequestTally(op: operation.number, code: error.code))
            }
        }
    }

    /// Where a deferred request goes. Called once every earlier request of the connection that
    /// could change its session has run: the checks and the step's fields see the session the
    /// request runs under.
    func route(_ request: Request, _ operation: Operation, session: Session) -> RequestRoute {
        guard case .project(let prepare) = operation.body else { return .inbox }
        do {
            let context = OperationContext(request: request, principal: try authorize(operation, session), core: self, session: session)
            let step = try prepare(context)
            return .lane(session.lane(of: context.project, in: lanes), context.principal, step)
        } catch {
            return .answer(Answer.failure(id: request.id, error), error.code)
        }
    }

    /// Runs a deferred request on the connection's inbox, in order with the connection's
    /// others. Answers its outcome and the log position that must be durable before it is sent:
    /// for a success, the newest change it shows; for an op that failed once it ran, the last
    /// change of what it could see (its project, or for an operator the whole log), as its error
    /// may show any of it. A request refused before it ran (its session, its role) shows nothing.
    func run(_ request: Request, session: Session) async -> RunOutcome {
        guard let operation = operations[request.op] else {
            return RunOutcome(requestID: request.id, result: .failure(unknownOp(request.op)), durableAt: nil)
        }
        if case .session(let body) = operation.body {
            let result = Result { () throws(GatehouseError) in Reply(try body(request, session, self)) }
            return RunOutcome(requestID: request.id, result: result, durableAt: nil)
        }
        let context: OperationContext
        do {
            context = OperationContext(request: request, principal: try authorize(operation, session), core: self, session: session)
        } catch {
            return RunOutcome(requestID: request.id, result: .failure(error), durableAt: nil)
        }
        do {
            let reply = try await run(operation, context)
            return RunOutcome(requestID: request.id, result: .success(reply), durableAt: reply.durableAt)
        } catch {
            let durableAt = error.code.mayShowData ? await lastChange(seenBy: context.principal) : nil
            return RunOutcome(requestID: request.id, result: .failure(error), durableAt: durableAt)
        }
    }

    private func run(_ operation: Operation, _ context: OperationContext) async throws(GatehouseError) -> Reply {
        switch operation.body {
        case .session:
            preconditionFailure("session ops are answered before they reach here")
        case .inline(let body):
            return Reply(try body(context))
        case .async(let body):
            return try await body(context)
        case .fast(let inline, let slow):
            // Deferred behind another request, a `sync` still answers from the board when it can.
            if let result = try inline(context) { return Reply(result) }
            return try await slow(context)
        case .project(let prepare):
            let step = try prepare(context)
            return try await context.project.perform { project in Result { () throws(GatehouseError) in try step(project) } }.get()
        }
    }

    /// The last change `principal` could have seen: its project's, or the log's for an operator.
    private func lastChange(seenBy principal: Principal) async -> LSN {
        guard let project = principal.project else { return engine.log.lastLSN }
        return await project.lastCommittedLSN
    }

    /// The backend's hot write, `currency.transact`, read by ``TransactScan`` without the general
    /// parser: only when the scanner reads the line (every shape the protocol allows), the
    /// session may run the op, and the op's checks pass. Anything else answers `nil` and takes
    /// the general road (which gives the same step, or the error). The caller must know the
    /// session is settled (nothing that could change it is still to run).
    func quickStep(_ line: UnsafeRawBufferPointer, session: Session) -> (lane: ProjectLane, principal: Principal, id: JSONValue, step: ProjectStep)? {
        guard let scan = TransactScan.scan(line), let principal = try? authorize(CurrencyOperations.transact, session),
            let project = principal.project, let step = CurrencyOperations.transactStep(scan)
        else { return nil }
        return (session.lane(of: project, in: lanes), principal, scan.id, step)
    }

    /// The SDK's poll, `sync` finding nothing changed, answered without the general parser or
    /// writer: only when ``SyncScan`` reads the line (every shape the protocol allows), the
    /// session may sync, and the project's board says nothing changed. Anything else answers
    /// `nil` and takes the general road (which gives the same answer, or the error).
    private func quickSync(_ line: UnsafeRawBufferPointer, session: Session) -> [UInt8]? {
        guard let scan = SyncScan.scan(line), let project = (try? authorize(SyncOperations.sync, session))?.project,
            project.syncBoard.nothingChanged(for: scan.profileID, after: scan.cursor) == true
        else { return nil }
        return scan.nothingChanged(in: line)
    }

    /// The session's principal, if it may run `operation` now.
    private func authorize(_ operation: Operation, _ session: Session) throws(GatehouseError) -> Principal {
        guard let principal = session.current else {
            throw GatehouseError(.unauthenticated, "say hello with a key first")
        }
        guard principal.isCurrent else {
            throw Session.staleKeyError
        }
        guard operation.roles.contains(principal.role) else {
            throw GatehouseError(.forbidden, "role \(principal.role.rawValue) may not run \(operation.name)")
        }
        return principal
    }

    private func answer(_ request: Request, _ operation: Operation, _ body: () throws(GatehouseError) -> JSONObject) -> LineOutcome {
        do {
            return .answer(Answer.success(id: request.id, try body()), RequestTally(op: operation.number, code: nil))
        } catch {
            return .answer(Answer.failure(id: request.id, error), RequestTally(op: operation.number, code: error.code))
        }
    }

    /// A `sync` answered by the quick road.
    private var syncTally: RequestTally { RequestTally(op: SyncOperations.syncNumber, code: nil) }

    private func unknownOp(_ op: String) -> GatehouseError {
        let shown = op.count > 64 ? String(op.prefix(64)) + "…" : op
        return GatehouseError(.unknownOp, "no op named \"\(shown)\"")
    }
}
