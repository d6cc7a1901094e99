import GatehouseBase
public import GatehouseCore
import GatehouseStorage

/// A project's incarnation: a server-wide number given to each created or restored project, so
/// records of a deleted project can never be applied to a new one with the same id.
typealias Incarnation = UInt64

/// What the runtime writes into the log. Storage sees only `kind` and bytes; this file is the
/// one place that knows what they mean (docs/data-format.md, "Runtime records").
enum RuntimeRecord: Equatable {
    case projectCreated(Incarnation, ProjectState)
    case projectDeleted(Incarnation)
    /// A tenant restored from `snapshotFile` (under `<data-dir>/snapshots/`), replacing
    /// `replacing` when it overwrote a live project.
    case projectRestored(Incarnation, snapshotFile: String, replacing: Incarnation?)
    case projectChanged(Incarnation, ProjectState.ChangeBatch)

    enum Kind: UInt16 {
        case projectCreated = 1
        case projectDeleted = 2
        case projectRestored = 3
        case projectChanged = 16
    }

    var incarnation: Incarnation {
        switch self {
        case .projectCreated(let incarnation, _), .projectDeleted(let incarnation),
            .projectRestored(let incarnation, _, _), .projectChanged(let incarnation, _):
            incarnation
        }
    }

    var logRecord: WALRecord {
        var writer = ByteWriter()
        writer.writeVarUInt(incarnation)
        let kind: Kind
        switch self {
        case .projectCreated(_, let state):
            kind = .projectCreated
            StateCoding.write(state, into: &writer)
        case .projectDeleted:
            kind = .projectDeleted
        case .projectRestored(_, let file, let replacing):
            kind = .projectRestored
            writer.writeString(file)
            writer.writeOptional(replacing) { $0.writeVarUInt($1) }
        case .projectChanged(_, let batch):
            kind = .projectChanged
            ChangeCoding.write(batch, into: &writer)
        }
        return WALRecord(kind: kind.rawValue, payload: writer.bytes)
    }

    init(_ record: WALRecord) throws(ByteReaderError) {
        guard let kind = Kind(rawValue: record.kind) else { throw ByteReaderError.invalid("record kind \(record.kind)", at: 0) }
        var reader = ByteReader(record.payload)
        let incarnation = try reader.readVarUInt()
        switch kind {
        case .projectCreated:
            self = .projectCreated(incarnation, try StateCoding.read(&reader))
        case .projectDeleted:
            self = .projectDeleted(incarnation)
        case .projectRestored:
            let file = try reader.readString()
            let replacing = try reader.readOptional { reader throws(ByteReaderError) in try reader.readVarUInt() }
            self = .projectRestored(incarnation, snapshotFile: file, replacing: replacing)
        case .projectChanged:
            self = .projectChanged(incarnation, try ChangeCoding.read(&reader))
        }
        try reader.expectEnd()
    }
}

/// A whole project state, for snapshots and `projectCreated` records.
enum StateCoding {
    /// Bumped when the layout below changes; a snapshot of a newer version is refused. Version 2
    /// added the purchase book and the currency ledger after the events (and optional event
    /// profile ids); version 1 bodies are still read, with neither.
    static let version: UInt64 = 2

    static func write(_ state: ProjectState, into writer: inout ByteWriter) {
        for section in sections { section(state, &writer) }
    }

    /// The body's parts in order. Each is independent of the others, so a big state encodes
    /// them side by side (``encode(_:)``) and lays them end to end: the same bytes either way.
    private static let sections: [@Sendable (ProjectState, inout ByteWriter) -> Void] = [
        { state, writer in
            writer.writeVarUInt(version)
            writer.writeString(state.id.rawValue)
            writer.writeString(state.name)
            writer.writeVarInt(state.createdMs)
            DigestCoding.write(state.keys.publicKey, into: &writer)
            DigestCoding.write(state.keys.secretKey, into: &writer)
            writer.writeVarUInt(state.keyGenerations[.public] ?? 1)
            writer.writeVarUInt(state.keyGenerations[.secret] ?? 1)
            ConfigCoding.write(state.config, into: &writer)
            writer.writeVarUInt(state.sequence)
            writer.writeVarUInt(state.configCursor)
            writer.writeArray(state.profiles.all) { ProfileCoding.write($1, into: &$0, partCursors: true) }
            writer.writeArray(state.profiles.aliasTokens.sorted { $0.key < $1.key }) { writer, entry in
                ProfileCoding.writeToken(entry.key, into: &writer)
                ProfileCoding.writeID(entry.value, into: &writer)
            }
        },
        { state, writer in writer.writeArray(state.events) { EventCoding.write($1, into: &$0) } },
        { state, writer in PurchaseCoding.write(state.purchases, into: &writer) },
        { state, writer in CurrencyCoding.write(state.currencies, into: &writer) },
    ]

    static func read(_ reader: inout ByteReader) throws(ByteReaderError) -> ProjectState {
        let start = reader.offset
        let version = try reader.readVarUInt()
        guard (1...Self.version).contains(version) else { throw ByteReaderError.invalid("state version \(version)", at: start) }
        let idOffset = reader.offset
        guard let id = try? ProjectID(validating: try reader.readString()) else {
            throw ByteReaderError.invalid("project id", at: idOffset)
        }
        let name = try reader.readString()
        let createdMs = try reader.readVarInt()
        let keys = KeyDigests(publicKey: try DigestCoding.read(&reader), secretKey: try DigestCoding.read(&reader))
        let generations: [KeyKind: UInt64] = [.public: try reader.readVarUInt(), .secret: try reader.readVarUInt()]
        let config = try ConfigCoding.read(&reader)
        let sequence = try reader.readVarUInt()
        let configCursor = try reader.readVarUInt()
        let profilesOffset = reader.offset
        let profileList = try reader.readArray { reader throws(ByteReaderError) in
            try ProfileCoding.read(&reader, partCursors: version >= 2)
        }
        let aliasTokenList = try reader.readArray { reader throws(ByteReaderError) in
            (try ProfileCoding.readToken(&reader), try ProfileCoding.readID(&reader))
        }
        var aliasTokens: [AppAccountToken: ProfileID] = [:]
        for (token, owner) in aliasTokenList { aliasTokens[token] = owner }
        guard let profiles = ProfileDirectory(profiles: profileList, aliasTokens: aliasTokens) else {
            throw ByteReaderError.invalid("profiles sharing an id, a customer user id or a token", at: profilesOffset)
        }
        let events = try EventCoding.readLog(&reader, stateVersion: version)
        let purchases = version >= 2 ? try PurchaseCoding.readBook(&reader) : PurchaseBook()
        let currencies = version >= 2 ? try CurrencyCoding.readLedger(&reader) : CurrencyLedger()
        return ProjectState(id: id, name: name, createdMs: createdMs, keys: keys, keyGenerations: generations,
                            config: config, sequence: sequence, configCursor: configCursor,
                            profiles: profiles, events: events, purchases: purchases, currencies: currencies)
    }

    /// Profiles past which a state's sections are encoded side by side.
    static let parallelEncodingProfiles = 10_000

    /// The snapshot body of `state`. Blocks while a big state's sections encode on every core:
    /// call it from a thread of your own (the snapshot writer's).
    static func encode(_ state: ProjectState) -> [UInt8] {
        guard state.profiles.count >= parallelEncodingProfiles else {
            var writer = ByteWriter(capacity: 1024)
            write(state, into: &writer)
            return writer.bytes
        }
        let parts = Parallel.run(sections.map { section in
            {
                var writer = ByteWriter(capacity: 1 << 16)
                section(state, &writer)
                return writer.bytes
            }
        })
        var body: [UInt8] = []
        body.reserveCapacity(parts.reduce(0) { $0 + $1.count })
        for part in parts { body.append(contentsOf: part) }
        return body
    }

    /// Decodes a whole snapshot body and checks the config it carries is valid, so a tampered or
    /// damaged file cannot install a state the rules would never have produced.
    static func decode(_ bytes: [UInt8]) throws(ByteReaderError) -> ProjectState {
        var reader = ByteReader(bytes)
        let state = try read(&reader)
        try reader.expectEnd()
        do {
            try state.config.validate()
        } catch {
            throw ByteReaderError.invalid("config (\(error.message))", at: 0)
        }
        return state
    }
}

/// The snapshot body of a project state, for tools that measure it (`gatehouse-bench memory`).
public enum ProjectSnapshotBody {
    public static func encode(_ state: ProjectState) -> [UInt8] { StateCoding.encode(state) }

    public static func decode(_ bytes: [UInt8]) throws -> ProjectState { try StateCoding.decode(bytes) }
}
