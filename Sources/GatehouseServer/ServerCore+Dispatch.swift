import GatehouseCore
import GatehouseRuntime
import GatehouseStorage
import GatehouseWire

/// What became of a request line read on the loop thread.
enum LineOutcome {
    /// Answered on the spot: errors, `hello`, and operations cheap enough for the loop thread.
    case answer([UInt8])
    /// To be run after the connection's earlier requests (``ServerCore/route(_:_:session:)``
    /// says how, once those that could change the session have run).
    case deferred(Request, Operation)
}

/// How a deferred request runs.
enum RequestRoute {
    /// Answered already: refused before it ran (bad fields, a role that may not run it).
    case answer([UInt8])
    /// A project op's step, for the project's lane.
    case lane(ProjectLane, Principal, ProjectStep)
    /// On the connection's inbox.
    case inbox
}

extension ServerCore {
    /// Handles one line on the loop thread. `canRunInline` is true when no earlier request of
    /// the connection is still running, so the session cannot change under this one.
    func handleLine(_ line: UnsafeRawBufferPointer, session: Session, canRunInline: Bool) -> LineOutcome {
        if canRunInline, let answer = quickSync(line, session: session) { return .answer(answer) }
        let request: Request
        do {
            request = try Request(line: line)
        } catch {
            return .answer(Answer.failure(id: error.id, error.error))
        }
        guard let operation = operations[request.op] else {
            return .answer(Answer.failure(id: request.id, unknownOp(request.op)))
        }
        guard canRunInline else { return .deferred(request, operation) }
        switch operation.body {
        case .session(let body):
            return answer(request) { () throws(GatehouseError) in try body(request, session, self) }
        case .inline(let body):
            return answer(request) { () throws(GatehouseError) in
                try body(OperationContext(request: request, principal: try authorize(operation, session), core: self, session: session))
            }
        case .async:
            do {
                _ = try authorize(operation, session)
            } catch {
                return .answer(Answer.failure(id: request.id, error))
            }
            return .deferred(request, operation)
        case .project:
            return .deferred(request, operation)
        case .fast(let inline, _):
            do {
                let context = OperationContext(request: request, principal: try authorize(operation, session), core: self, session: session)
                guard let result = try inline(context) else { return .deferred(request, operation) }
                return .answer(Answer.success(id: request.id, result))
            } catch {
                return .answer(Answer.failure(id: request.id, error))
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
            return .answer(Answer.failure(id: request.id, error))
        }
    }

    /// Runs a deferred request on the connection's inbox, in order with the connection's
    /// others. Answers its bytes and the log position that must be durable before they are sent:
    /// for a success, the newest change it shows; for an op that failed once it ran, the last
    /// change of what it could see (its project, or for an operator the whole log), as its error
    /// may show any of it. A request refused before it ran (its session, its role) shows nothing.
    func run(_ request: Request, session: Session) async -> (answer: [UInt8], durableAt: LSN?) {
        guard let operation = operations[request.op] else {
            return (Answer.failure(id: request.id, unknownOp(request.op)), nil)
        }
        if case .session(let body) = operation.body {
            do {
                return (Answer.success(id: request.id, try body(request, session, self)), nil)
            } catch {
                return (Answer.failure(id: request.id, error), nil)
            }
        }
        let context: OperationContext
        do {
            context = OperationContext(request: request, principal: try authorize(operation, session), core: self, session: session)
        } catch {
            return (Answer.failure(id: request.id, error), nil)
        }
        do {
            let reply: Reply
            switch operation.body {
            case .session:
                preconditionFailure("session ops are answered above")
            case .inline(let body):
                reply = Reply(try body(context))
            case .async(let body):
                reply = try await body(context)
            case .fast(let inline, let slow):
                // Deferred behind another request, a `sync` still answers from the board when it can.
                if let result = try inline(context) { reply = Reply(result) } else { reply = try await slow(context) }
            case .project(let prepare):
                let step = try prepare(context)
                reply = try await context.project.perform { project in Result { () throws(GatehouseError) in try step(project) } }.get()
            }
            return (Answer.success(id: request.id, reply.result), reply.durableAt)
        } catch {
            let durableAt = error.code.mayShowData ? await lastChange(seenBy: context.principal) : nil
            return (Answer.failure(id: request.id, error), durableAt)
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

    private func answer(_ request: Request, _ body: () throws(GatehouseError) -> JSONObject) -> LineOutcome {
        do {
            return .answer(Answer.success(id: request.id, try body()))
        } catch {
            return .answer(Answer.failure(id: request.id, error))
        }
    }

    private func unknownOp(_ op: String) -> GatehouseError {
        let shown = op.count > 64 ? String(op.prefix(64)) + "…" : op
        return GatehouseError(.unknownOp, "no op named \"\(shown)\"")
    }
}
