import GatehouseBase
public import GatehouseCore
import GatehouseStorage
import Synchronization

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
        var writer = Self.payloadWriter(incarnation)
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

    /// The record of `.projectChanged(incarnation, transact.batch)`, written straight from the
    /// transact's fields (``ChangeCoding/write(_:into:)-(TransactChange,_)``).
    static func projectChanged(_ incarnation: Incarnation, _ transact: ProjectState.TransactChange) -> WALRecord {
        var writer = payloadWriter(incarnation)
        ChangeCoding.write(transact, into: &writer)
        return WALRecord(kind: Kind.projectChanged.rawValue, payload: writer.bytes)
    }

    /// A payload's writer with the incarnation, every record's first field, written. Room for a
    /// usual change batch (a `currency.transact`'s is about 130 bytes) from the start: the
    /// default 64 grew the buffer once or twice for nearly every record.
    private static func payloadWriter(_ incarnation: Incarnation) -> ByteWriter {
        var writer = ByteWriter(capacity: 256)
        writer.writeVarUInt(incarnation)
        return writer
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

/// A whole project state, for snapshots and `projectCreated` records (docs/data-format.md,
/// "Project state").
///
/// Versions 3 and later lay the state out in four sections, each preceded in the body by its length:
/// the head (names, keys, config, profiles, alias tokens, outbox), the events, the purchase book and the
/// currency ledger. Each is independent of the others, so a big state encodes them side by side
/// and a big body decodes them side by side; either way the bytes are the same.
enum StateCoding {
    /// Bumped when the layout changes; a body of a newer version is refused. Version 2 added the
    /// purchase book and the currency ledger after the events (and optional event profile ids);
    /// version 3 the section lengths and the compact events (``EventLogCoding``); version 4 the
    /// config's layout version 2 in the head (``ConfigCoding``); version 5 the profiles' layout 2
    /// (install ids, attribute times, the attributes cursor: ``ProfileCoding``); version 6 the
    /// config's layout version 3; version 7 the config's layout version 4 and the outbox at the
    /// end of the head (``OutboxCoding``); version 8 the config's layout version 5 and the web
    /// purchases after the outbox (``WebCoding``); version 9 Stripe's links and refunds, the link
    /// key, the redemption links and the Checkout Sessions at the end of the web purchases. Older
    /// versions are still read.
    static let version: UInt64 = 9

    /// The first version laid out in sections.
    static let sectionedVersion: UInt64 = 3

    /// The sections of a version 3 or later body, in order.
    static let sectionCount = 4

    static func write(_ state: ProjectState, into writer: inout ByteWriter) {
        write(sections: sectionBytes(of: state), into: &writer)
    }

    /// Each section's bytes, in order (tests build bodies from them with ``body(sections:)``).
    static func sectionBytes(of state: ProjectState) -> [[UInt8]] {
        sections.map { section in
            var part = ByteWriter(capacity: 256)
            section(state, &part)
            return part.bytes
        }
    }

    /// A body of this version made of `parts`.
    static func body(sections parts: [[UInt8]]) -> [UInt8] {
        var writer = ByteWriter()
        write(sections: parts, into: &writer)
        return writer.bytes
    }

    /// The table of the sections' lengths, then the sections.
    private static func write(sections parts: [[UInt8]], into writer: inout ByteWriter) {
        writeTable(parts, into: &writer)
        for part in parts { writer.writeRaw(part) }
    }

    /// The version, then each section's length.
    private static func writeTable(_ parts: [[UInt8]], into writer: inout ByteWriter) {
        writer.writeVarUInt(version)
        for part in parts { writer.writeVarUInt(UInt64(part.count)) }
    }

    private static let sections: [@Sendable (ProjectState, inout ByteWriter) -> Void] = [
        { state, writer in writeHead(state, into: &writer) },
        { state, writer in EventLogCoding.write(state.events, into: &writer) },
        { state, writer in PurchaseCoding.write(state.purchases, into: &writer) },
        { state, writer in CurrencyCoding.write(state.currencies, into: &writer) },
    ]

    /// Section 0, as versions 1 and 2 wrote the start of the body after the version.
    private static func writeHead(_ state: ProjectState, into writer: inout ByteWriter) {
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
        writer.writeVarUInt(UInt64(state.profiles.count))
        state.profiles.forEachByID { ProfileCoding.write($0, into: &writer, stored: true) }
        writer.writeArray(state.profiles.aliasTokensInOrder) { writer, entry in
            ProfileCoding.writeToken(entry.token, into: &writer)
            ProfileCoding.writeID(entry.owner, into: &writer)
        }
        OutboxCoding.write(state.outbox, into: &writer)
        WebCoding.write(state.web, into: &writer)
    }

    /// What section 0 holds.
    private struct Head {
        var id: ProjectID
        var name: String
        var createdMs: Int64
        var keys: KeyDigests
        var generations: [KeyKind: UInt64]
        var config: ProjectConfig
        var sequence: UInt64
        var configCursor: UInt64
        var profiles: ProfileDirectory
        var outbox: Outbox
        var web: WebPurchases
    }

    private static func readHead(_ reader: inout ByteReader, version: UInt64) throws(ByteReaderError) -> Head {
        let idOffset = reader.offset
        guard let id = try? ProjectID(validating: try reader.readString()) else {
            throw ByteReaderError.invalid("project id", at: idOffset)
        }
        let name = try reader.readString()
        let createdMs = try reader.readVarInt()
        let keys = KeyDigests(publicKey: try DigestCoding.read(&reader), secretKey: try DigestCoding.read(&reader))
        let generations: [KeyKind: UInt64] = [.public: try reader.readVarUInt(), .secret: try reader.readVarUInt()]
        let config = try ConfigCoding.read(&reader, version: configLayout(stateVersion: version))
        let sequence = try reader.readVarUInt()
        let configCursor = try reader.readVarUInt()
        let profilesOffset = reader.offset
        let profileList = try reader.readArray { reader throws(ByteReaderError) in
            version >= 5
                ? try ProfileCoding.read(&reader, stored: true)
                : try ProfileCoding.readLayout1(&reader, partCursors: version >= 2, attributesMs: nil)
        }
        let aliasTokenCount = try reader.readCount(maximum: reader.remaining)
        var aliasTokens: [AppAccountToken: ProfileID] = [:]
        aliasTokens.reserveCapacity(aliasTokenCount)
        for _ in 0..<aliasTokenCount {
            aliasTokens[try ProfileCoding.readToken(&reader)] = try ProfileCoding.readID(&reader)
        }
        guard let profiles = ProfileDirectory(profiles: profileList, aliasTokens: aliasTokens) else {
            throw ByteReaderError.invalid("profiles sharing an id, a customer user id, a token or an install id", at: profilesOffset)
        }
        let outbox = version >= 7 ? try OutboxCoding.read(&reader) : Outbox()
        let web = version >= 8 ? try WebCoding.read(&reader, version: version) : WebPurchases()
        return Head(id: id, name: name, createdMs: createdMs, keys: keys, generations: generations, config: config,
                    sequence: sequence, configCursor: configCursor, profiles: profiles, outbox: outbox, web: web)
    }

    /// The config layout a head of state version `version` holds.
    private static func configLayout(stateVersion version: UInt64) -> UInt64 {
        switch version {
        case 8...: 5
        case 7: 4
        case 6: 3
        case 4, 5: 2
        default: 1
        }
    }

    private static func state(_ head: Head, _ events: EventLog, _ purchases: PurchaseBook, _ currencies: CurrencyLedger)
        -> ProjectState
    {
        ProjectState(id: head.id, name: head.name, createdMs: head.createdMs, keys: head.keys, keyGenerations: head.generations,
                     config: head.config, sequence: head.sequence, configCursor: head.configCursor,
                     profiles: head.profiles, events: events, purchases: purchases, currencies: currencies, outbox: head.outbox,
                     web: head.web)
    }

    static func read(_ reader: inout ByteReader) throws(ByteReaderError) -> ProjectState {
        let start = reader.offset
        let version = try reader.readVarUInt()
        guard (1...Self.version).contains(version) else { throw ByteReaderError.invalid("state version \(version)", at: start) }
        guard version >= sectionedVersion else {
            let head = try readHead(&reader, version: version)
            let events = try EventCoding.readLog(&reader, stateVersion: version)
            let purchases = version >= 2 ? try PurchaseCoding.readBook(&reader) : PurchaseBook()
            let currencies = version >= 2 ? try CurrencyCoding.readLedger(&reader) : CurrencyLedger()
            return state(head, events, purchases, currencies)
        }
        let lengths = try readLengths(&reader)
        var parts: [(bytes: [UInt8], offset: Int)] = []
        for length in lengths { parts.append((bytes: try reader.readRaw(length), offset: reader.offset - length)) }
        return try decodeSections(parts.count, version: version) { parts[$0] }
    }

    /// The section lengths after the version. Each must fit what is left: a damaged length
    /// fails here or, for a length too short, where its section is read to its end.
    private static func readLengths(_ reader: inout ByteReader) throws(ByteReaderError) -> [Int] {
        var lengths: [Int] = []
        var total = 0
        for _ in 0..<sectionCount {
            let offset = reader.offset
            let length = try reader.readCount()
            guard length <= reader.remaining - total else { throw ByteReaderError.invalid("section length \(length)", at: offset) }
            total += length
            lengths.append(length)
        }
        return lengths
    }

    /// One decoded section.
    private enum Section {
        case head(Head)
        case events(EventLog)
        case purchases(PurchaseBook)
        case currencies(CurrencyLedger)
    }

    /// Decodes section `number` of a body of `version` from its own bytes, which must be read to
    /// their end; errors name offsets in the body (`offset`: where the section starts).
    private static func decodeSection(_ number: Int, _ bytes: [UInt8], at offset: Int, version: UInt64)
        throws(ByteReaderError) -> Section
    {
        var reader = ByteReader(bytes)
        do {
            let section: Section
            switch number {
            case 0: section = .head(try readHead(&reader, version: version))
            case 1: section = .events(try EventLogCoding.read(&reader))
            case 2: section = .purchases(try PurchaseCoding.readBook(&reader))
            default: section = .currencies(try CurrencyCoding.readLedger(&reader))
            }
            try reader.expectEnd()
            return section
        } catch {
            throw error.moved(by: offset)
        }
    }

    /// Body bytes past which the sections decode side by side.
    static let parallelDecodingBytes = 1 << 20

    /// Decodes the sections, side by side when `parallel`; `part(n)` answers section n's bytes
    /// and where they start in the body. The first damaged section (in order) is the error.
    private static func decodeSections(_ count: Int, version: UInt64, parallel: Bool = false,
                                       _ part: @escaping (Int) -> (bytes: [UInt8], offset: Int)) throws(ByteReaderError) -> ProjectState
    {
        let decode: (Int) -> Result<Section, ByteReaderError> = { number in
            let (bytes, offset) = part(number)
            return Result { () throws(ByteReaderError) in try decodeSection(number, bytes, at: offset, version: version) }
        }
        let results = parallel ? SectionJobs.run(count, costliestFirst: decodingOrder, decode) : (0..<count).map(decode)
        var head: Head?
        var events = EventLog()
        var purchases = PurchaseBook()
        var currencies = CurrencyLedger()
        for result in results {
            switch try result.get() {
            case .head(let value): head = value
            case .events(let value): events = value
            case .purchases(let value): purchases = value
            case .currencies(let value): currencies = value
            }
        }
        guard let head else { preconditionFailure("section 0 always decodes to the head") }
        return state(head, events, purchases, currencies)
    }

    /// Sections by decoding cost, costliest first (measured with 1M profiles): the purchase book
    /// (the book rebuilds its indexes and timers), the head (the profile directory its indexes),
    /// the ledger, the events.
    static let decodingOrder = [2, 0, 3, 1]
    /// Sections by encoding cost, costliest first: the ledger, the book, then the events (quick
    /// to encode, but the biggest to compress) and the head.
    static let encodingOrder = [3, 2, 1, 0]

    /// Room reserved for section `number` of a big state: generous guesses from its counts
    /// (with 1M profiles the sections take 74, 93 a kept event, 156 and 141 bytes a profile).
    /// Room never written costs no memory, while a writer that outgrows its array copies
    /// everything written so far into a fresh one, and touches the new pages, every time it
    /// doubles: over half a gigabyte, a few hundred milliseconds of a core.
    private static func sectionBytesReserved(_ number: Int, of state: ProjectState) -> Int {
        let perProfile = 256
        switch number {
        case 0: return 1024 + perProfile * state.profiles.count
        case 1: return 1024 + state.events.storedDetailsCount + perProfile * state.events.count
        case 2: return 1024 + perProfile * (state.purchases.subscriptions.count + state.purchases.oneTimePurchases.count)
        default: return 1024 + perProfile * (state.currencies.historyCount + state.currencies.termGrantCount)
        }
    }

    /// Profiles past which a state's sections are encoded side by side.
    static let parallelEncodingProfiles = 10_000
    /// Reserved section bytes (``sectionBytesReserved(_:of:)``) past which a state's sections
    /// are encoded side by side whatever its profile count: a few profiles can hold millions of
    /// history entries and events (a backend crediting one profile), and such a body grown in
    /// one writer doubled its way up, copying itself a score of times.
    static let parallelEncodingBytes = 4 << 20

    /// The snapshot body of `state`. Blocks while a big state's sections encode on every core:
    /// call it from a thread of your own (the snapshot writer's).
    static func encode(_ state: ProjectState) -> [UInt8] {
        let parts = encodeParts(state)
        guard parts.count > 1 else { return parts[0] }
        var body: [UInt8] = []
        body.reserveCapacity(parts.reduce(0) { $0 + $1.count })
        for part in parts { body.append(contentsOf: part) }
        return body
    }

    /// The snapshot body of `state` in parts to lay end to end, for
    /// `SnapshotFile.write(path:header:parts:fileSystem:)`: a big state's table (the version and
    /// the lengths) and its sections, never joined into one array; a small state's body whole.
    /// Blocks like ``encode(_:)``.
    static func encodeParts(_ state: ProjectState) -> [[UInt8]] {
        let reserved = (0..<sections.count).map { sectionBytesReserved($0, of: state) }
        guard state.profiles.count >= parallelEncodingProfiles || reserved.reduce(0, +) >= parallelEncodingBytes else {
            var writer = ByteWriter(capacity: 1024)
            write(state, into: &writer)
            return [writer.bytes]
        }
        let parts = SectionJobs.run(sections.count, costliestFirst: encodingOrder) { number in
            var writer = ByteWriter(capacity: reserved[number])
            sections[number](state, &writer)
            return writer.bytes
        }
        var table = ByteWriter(capacity: 64)
        writeTable(parts, into: &table)
        return [table.bytes] + parts
    }

    /// Decodes a whole snapshot body and checks the config it carries is valid, so a tampered or
    /// damaged file cannot install a state the rules would never have produced. A big body in
    /// sections decodes them side by side: call it from a thread of your own.
    /// `parallelFrom`: the body size from which the sections decode side by side (tests lower it).
    static func decode(_ bytes: [UInt8], parallelFrom: Int = parallelDecodingBytes) throws(ByteReaderError) -> ProjectState {
        var reader = ByteReader(bytes)
        let state: ProjectState
        if bytes.count >= parallelFrom, let first = bytes.first, (sectionedVersion...version).contains(UInt64(first)) {
            let version = try reader.readVarUInt()
            let lengths = try readLengths(&reader)
            var offsets: [Int] = []
            var offset = reader.offset
            for length in lengths {
                offsets.append(offset)
                offset += length
            }
            guard offset == bytes.count else { throw ByteReaderError.invalid("trailing bytes", at: offset) }
            // Each section copies its bytes out on the thread that decodes it.
            state = try decodeSections(sectionCount, version: version, parallel: true) { number in
                (bytes: Array(bytes[offsets[number]..<offsets[number] + lengths[number]]), offset: offsets[number])
            }
        } else {
            state = try read(&reader)
            try reader.expectEnd()
        }
        do {
            try state.config.validate()
        } catch {
            throw ByteReaderError.invalid("config (\(error.message))", at: 0)
        }
        return state
    }
}

/// A body's sections, coded on every core. Their costs differ widely (with 1M profiles the events
/// take a fraction of what the purchase book does), so each worker takes the next section as it
/// finishes one, costliest first, rather than a fixed share: the slowest worker ends about when
/// the costliest section is done, not when two of the costly ones are.
enum SectionJobs {
    /// Answers `job(n)` for every n in `0..<count`, in order of n; `costliestFirst` is the order
    /// the workers take them in (every n once).
    static func run<T>(_ count: Int, costliestFirst order: [Int], _ job: @escaping (Int) -> T) -> [T] {
        precondition(order.sorted() == Array(0..<count), "every section once")
        let next = Counter()
        let done = Parallel.map(min(Parallel.cores, count), makeContext: {}) { _, _ -> [(Int, T)] in
            var results: [(Int, T)] = []
            while true {
                let taken = next.take()
                guard taken < order.count else { return results }
                results.append((order[taken], job(order[taken])))
            }
        }
        var results = [T?](repeating: nil, count: count)
        for (number, result) in done.joined() { results[number] = result }
        return results.map { $0! }
    }

    /// The workers' shared place in the order.
    private final class Counter: Sendable {
        private let value = Atomic<Int>(0)

        func take() -> Int { value.wrappingAdd(1, ordering: .relaxed).oldValue }
    }
}

/// The snapshot body of a project state, for tools that measure it (`gatehouse-bench memory`).
public enum ProjectSnapshotBody {
    public static func encode(_ state: ProjectState) -> [UInt8] { StateCoding.encode(state) }

    public static func decode(_ bytes: [UInt8]) throws -> ProjectState { try StateCoding.decode(bytes) }
}
