import GatehouseCore
import GatehouseRuntime
import GatehouseStorage
import GatehouseWire

/// One op of the protocol: its name, the roles that may run it, and how it runs.
struct Operation: Sendable {
    let name: String
    let roles: Set<Role>
    let body: Body
    /// Only meaningful on a connection held open (`hello`, `watch`, `unwatch`): HTTP, where
    /// each request stands alone, refuses it.
    let needsHeldConnection: Bool
    /// Its place in ``Operations/all``, which names it in the request metrics (set by
    /// ``Operations/table``; an op taken from elsewhere counts as "other"). Not a default of
    /// `Operations.otherNumber`: that reads `Operations.all` while its ops are being made.
    fileprivate(set) var number = Int.max

    init(name: String, roles: Set<Role>, needsHeldConnection: Bool = false, body: Body) {
        self.name = name
        self.roles = roles
        self.needsHeldConnection = needsHeldConnection
        self.body = body
    }

    enum Body: Sendable {
        /// Works on the session itself, before or without a principal (`hello`).
        case session(@Sendable (Request, Session, ServerCore) throws(GatehouseError) -> JSONObject)
        /// Cheap and lock-free enough to answer on the loop thread.
        case inline(@Sendable (OperationContext) throws(GatehouseError) -> JSONObject)
        /// Runs on the connection's inbox, typically inside a project's actor.
        case async(@Sendable (OperationContext) async throws(GatehouseError) -> Reply)
        /// Reads and checks the request's fields where it was read (`prepare`), then runs the
        /// ``ProjectStep`` it answers inside the principal's project: on the project's lane,
        /// with the other steps that reached the project in the same loop turns, in one visit
        /// of the actor (see ``ProjectLane``).
        case project(_ prepare: @Sendable (OperationContext) throws(GatehouseError) -> ProjectStep)
        /// Tries to answer on the loop thread from published state (`nil`: it cannot), and
        /// otherwise runs like `async`.
        case fast(
            inline: @Sendable (OperationContext) throws(GatehouseError) -> JSONObject?,
            slow: @Sendable (OperationContext) async throws(GatehouseError) -> Reply)
    }
}

/// The part of a project op that runs inside the project's actor.
typealias ProjectStep = @Sendable (isolated Project) throws(GatehouseError) -> Reply

/// An answer, and the log position that must be durable before it may go out: the change it
/// reports, or for a read the last change it reflects (DESIGN.md: no read shows a write that
/// could still be lost).
struct Reply: Sendable {
    var result: JSONObject
    var durableAt: LSN?
    /// The profile the answer shows, for front ends that answer in a form of their own (the
    /// RevenueCat-compatible REST builds its subscriber object from it).
    var shown: ShownProfile?
    /// The config the answer shows (`config.get`), for the same front ends.
    var config: ProjectConfig?

    init(_ result: JSONObject, after lsn: LSN? = nil, showing shown: ShownProfile? = nil, config: ProjectConfig? = nil) {
        self.result = result
        self.durableAt = lsn
        self.shown = shown
        self.config = config
    }
}

/// A profile as an op answered it, and whether the op created it.
struct ShownProfile: Sendable {
    var view: ProfileView
    var created = false
}

/// What an operation's body gets: the request, who sent it, and the server.
struct OperationContext: Sendable {
    let request: Request
    let principal: Principal
    let core: ServerCore
    /// The connection's session (its watches).
    let session: Session

    var fields: Fields { request.fields }

    /// The project of a `sdk` or `server` principal.
    var project: Project {
        guard let project = principal.project else {
            preconditionFailure("a project op ran for a principal without a project; its roles are wrong")
        }
        return project
    }
}

enum Operations {
    /// Every op this server answers.
    static let all: [Operation] = SessionOperations.all + AdminOperations.all + ConfigOperations.all + ProfileOperations.all
        + PurchaseOperations.all + CurrencyOperations.all + SyncOperations.all + WebhookOperations.all + WebOperations.all

    /// What the metrics count a request under when it names no op this server knows (or none).
    static let otherNumber = all.count

    /// The op table by name, each op knowing its number.
    static let table: [String: Operation] = {
        var table: [String: Operation] = [:]
        for (number, operation) in all.enumerated() {
            var numbered = operation
            numbered.number = number
            table[operation.name] = numbered
        }
        return table
    }()

    static func number(of name: String) -> Int { table[name]?.number ?? otherNumber }
}

/// What a request came to, for the request metrics: its op's number and its error code (`nil`: ok).
struct RequestTally: Sendable, Equatable {
    let op: Int
    let code: ErrorCode?

    static func other(_ code: ErrorCode?) -> RequestTally { RequestTally(op: Operations.otherNumber, code: code) }
}
