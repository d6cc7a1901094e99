public import GatehouseBase

/// The project's event feed, oldest first: the events of the last 7 days, at most the newest
/// ``Retention/feedEventsMax`` (PROTOCOL.md, "The event feed").
///
/// Events are kept slim: a fixed-size entry each, and every event's details end to end in
/// chunks of 64 KiB (``ChunkedArray``, ``ChunkedBytes``: a snapshot's copy of the state costs the
/// next event a chunk, not the feed), so a feed of a million events is a few thousand
/// allocations rather than a million (a small array costs a 32-byte header and its malloc
/// rounding). The details are held with their names interned (``EventDetailNames``); reading an
/// event builds an ``Event`` with its own copy of them in the packed form. Snapshots store the
/// entries' fields and the details as held (``forEachStored(_:)``,
/// ``forEachStoredDetailsRun(_:)``, ``Loader``).
///
/// Forgetting the oldest events moves nothing: the entries before `head` and the details before
/// `detailsStart` are forgotten, and the chunks that hold only forgotten ones are freed. In a
/// steady flow, where events age out as fast as they come, a write costs the same whether the
/// feed is filling or full.
public struct EventLog: Sendable {
    /// One kept event without its details, which end at `detailsEnd` in `detailBytes` and start
    /// where the previous event's end (the first event's: at `detailsStart`). Fields ordered
    /// for a 72-byte stride.
    private struct Entry: Sendable {
        let customerUserID: String?
        let cursor: UInt64
        let atMs: Int64
        let detailsEnd: Int
        let profileID: ProfileID?
        let type: EventType
        let index: UInt32
    }

    /// `entries[..<head]` are forgotten.
    private var entries = ChunkedArray<Entry>()
    private var head = 0
    /// The interned details of the kept events in feed order, at logical offsets from the
    /// feed's first event ever kept; those before `detailsStart` are forgotten.
    private var detailBytes = ChunkedBytes()
    private var detailsStart = 0

    public init() {}

    public init(events: [Event]) {
        entries.reserveCapacity(events.count)
        for event in events { append(event) }
    }

    /// Every kept event, oldest first: a copy of the whole feed, for tests and small feeds.
    /// Walking the log itself copies one event at a time.
    public var events: [Event] { Array(self) }

    /// Events after `cursor` (exclusive), oldest first, at most `limit`.
    public func events(after cursor: UInt64, limit: Int) -> [Event] {
        var low = head
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].cursor <= cursor { low = middle + 1 } else { high = middle }
        }
        let first = low - head
        return Array(self[first..<Swift.min(count, first + limit)])
    }

    /// Adds the newest event: ids only grow (a batch's events follow its number, each batch's
    /// after the last). Rules append through `ProjectState.apply`; loading a snapshot, in order.
    public mutating func append(_ event: Event) {
        if let last = newestEntry {
            precondition((last.cursor, last.index) < (event.cursor, event.index), "event \(event.id) after \(last.cursor)_\(last.index)")
        }
        detailBytes.appendRun { EventDetailNames.intern(event.packedDetails, into: &$0) }
        entries.append(Entry(customerUserID: event.customerUserID, cursor: event.cursor, atMs: event.atMs,
                             detailsEnd: detailBytes.count, profileID: event.profileID, type: event.type, index: event.index))
    }

    /// Adds the newest event, its details written by `details` straight into the held form: the
    /// events the rules record most (a balance change's, on every `currency.transact` and every
    /// replayed one) skip building the details as values, packing them and interning the packed
    /// form. The bytes are the same as ``append(_:)`` holds for the same details.
    mutating func append(cursor: UInt64, index: UInt32, type: EventType, profileID: ProfileID?, customerUserID: String?,
                         atMs: Int64, details: (inout HeldDetailsWriter) -> Void)
    {
        if let last = newestEntry {
            precondition((last.cursor, last.index) < (cursor, index), "event \(cursor)_\(index) after \(last.cursor)_\(last.index)")
        }
        detailBytes.appendRun { bytes in
            var writer = HeldDetailsWriter(adopting: &bytes)
            details(&writer)
            bytes = writer.finish()
        }
        entries.append(Entry(customerUserID: customerUserID, cursor: cursor, atMs: atMs, detailsEnd: detailBytes.count,
                             profileID: profileID, type: type, index: index))
    }

    /// Room for `count` events without growing the entries (the details still grow as they come).
    public mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
    }

    private var newestEntry: Entry? { entries.count > head ? entries[entries.count - 1] : nil }

    /// Forgets the events older than `keptAgeMs` before `nowMs` and those beyond the newest
    /// `keptCountMax`, oldest first. Costs the events it forgets and nothing when there are none:
    /// it runs after every batch.
    mutating func prune(nowMs: Int64, keptAgeMs: Int64, keptCountMax: Int) {
        _ = prune(nowMs: nowMs, keptAgeMs: keptAgeMs, keptCountMax: keptCountMax, collecting: false) { _ in false }
    }

    /// Like ``prune(nowMs:keptAgeMs:keptCountMax:)``, but an event `keeping` holds is not
    /// forgotten for its age, nor any after it (the feed stays one run); answers the held events
    /// the count cap forgot all the same, oldest first.
    mutating func prune(nowMs: Int64, keptAgeMs: Int64, keptCountMax: Int, keeping: (EventKey) -> Bool) -> [EventKey] {
        prune(nowMs: nowMs, keptAgeMs: keptAgeMs, keptCountMax: keptCountMax, collecting: true, keeping: keeping)
    }

    @inline(__always)
    private mutating func prune(nowMs: Int64, keptAgeMs: Int64, keptCountMax: Int, collecting: Bool,
                                keeping: (EventKey) -> Bool) -> [EventKey]
    {
        let end = entries.count
        let capped = Swift.max(head, end - keptCountMax)
        var pushedOut: [EventKey] = []
        if collecting {
            for position in head..<capped where keeping(key(at: position)) { pushedOut.append(key(at: position)) }
        }
        var first = capped
        while first < end, nowMs - entries[first].atMs > keptAgeMs, !keeping(key(at: first)) { first += 1 }
        guard first > head else { return pushedOut }
        detailsStart = entries[first - 1].detailsEnd
        head = first
        entries.freeChunks(before: head)
        head -= entries.dropFreedChunks()
        detailBytes.freeChunks(before: detailsStart)
        return pushedOut
    }

    private func key(at position: Int) -> EventKey {
        EventKey(cursor: entries[position].cursor, index: entries[position].index)
    }

    /// The kept event at `key`, if any.
    public func event(at key: EventKey) -> Event? {
        var low = head
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if self.key(at: middle) < key { low = middle + 1 } else { high = middle }
        }
        guard low < entries.count, self.key(at: low) == key else { return nil }
        return self[low - head]
    }

    /// The bytes of the packed details the log holds in chunks, kept or not yet freed (for tests
    /// of pruning).
    var detailBytesHeld: Int { detailBytes.heldCount }

    /// Where the chunks of entries lie (tests: what a write moved).
    var entryChunkAddresses: [UnsafeRawPointer?] { entries.chunkAddresses }
}

/// The log in its stored form (state version 3 snapshot bodies): each event's fields, and the
/// kept events' details end to end in ``EventDetailNames``' form, so a snapshot copies the
/// details as they are held, one array each way, with nothing decoded or re-encoded.
extension EventLog {
    /// One kept event without its details, which take `detailsCount` bytes of ``storedDetails``
    /// after the previous event's.
    public struct StoredEvent: Sendable, Equatable {
        public var cursor: UInt64
        public var index: UInt32
        public var type: EventType
        public var profileID: ProfileID?
        public var customerUserID: String?
        public var atMs: Int64
        public var detailsCount: Int

        public init(cursor: UInt64, index: UInt32, type: EventType, profileID: ProfileID?, customerUserID: String?, atMs: Int64,
                    detailsCount: Int)
        {
            self.cursor = cursor
            self.index = index
            self.type = type
            self.profileID = profileID
            self.customerUserID = customerUserID
            self.atMs = atMs
            self.detailsCount = detailsCount
        }
    }

    /// How many bytes the details of the kept events take end to end.
    public var storedDetailsCount: Int { detailBytes.count - detailsStart }

    /// Calls `body` with the details of every kept event, oldest first, end to end, a run of
    /// whole events' details at a time (they lie in chunks).
    public func forEachStoredDetailsRun(_ body: (ArraySlice<UInt8>) -> Void) {
        detailBytes.forEachRun(from: detailsStart, body)
    }

    /// The details of every kept event, oldest first, end to end: a copy, for tests and small
    /// feeds.
    public var storedDetails: [UInt8] {
        var all: [UInt8] = []
        all.reserveCapacity(storedDetailsCount)
        forEachStoredDetailsRun { all.append(contentsOf: $0) }
        return all
    }

    /// Calls `body` with every kept event, oldest first, without building an ``Event``.
    public func forEachStored(_ body: (StoredEvent) -> Void) {
        var start = detailsStart
        for position in head..<entries.count {
            let entry = entries[position]
            body(StoredEvent(cursor: entry.cursor, index: entry.index, type: entry.type, profileID: entry.profileID,
                             customerUserID: entry.customerUserID, atMs: entry.atMs, detailsCount: entry.detailsEnd - start))
            start = entry.detailsEnd
        }
    }

    /// Builds a log from its stored form, which comes from disk: events must come in increasing
    /// order of cursor and index, their lengths must cover the details exactly, and every
    /// event's details are checked (``EventDetailNames/check(_:from:ends:)``), so a damaged
    /// snapshot is refused with an error and never installs an event out of order or a
    /// malformed detail. Errors name the offset the caller gives for an event, or for details
    /// their offset in the caller's bytes.
    public struct Loader {
        private var log = EventLog()
        private let details: [UInt8]
        private let offset: Int

        /// `details`: every event's, end to end, found at `offset` in the caller's bytes;
        /// `count`: the events to come (room is reserved).
        public init(details: [UInt8], count: Int, offset: Int) {
            log.detailBytes = ChunkedBytes(details)
            self.details = details
            log.entries.reserveCapacity(count)
            self.offset = offset
        }

        /// Adds the next event; `eventOffset` is where it was read, for errors. Its details are
        /// checked with every other event's by ``finish()``.
        public mutating func append(_ event: StoredEvent, at eventOffset: Int) throws(ByteReaderError) {
            if let last = log.entries.last, (last.cursor, last.index) >= (event.cursor, event.index) {
                throw ByteReaderError.invalid("event \(Event.id(cursor: event.cursor, index: event.index)) out of order", at: eventOffset)
            }
            let start = log.entries.last?.detailsEnd ?? 0
            guard event.detailsCount >= 1, event.detailsCount <= log.detailBytes.count - start else {
                throw ByteReaderError.invalid("event details length \(event.detailsCount)", at: eventOffset)
            }
            log.entries.append(Entry(customerUserID: event.customerUserID, cursor: event.cursor, atMs: event.atMs,
                                     detailsEnd: start + event.detailsCount, profileID: event.profileID, type: event.type,
                                     index: event.index))
        }

        /// The log, once every event is in, every detail byte belongs to one and every event's
        /// details are well formed.
        public consuming func finish() throws(ByteReaderError) -> EventLog {
            let end = log.entries.last?.detailsEnd ?? 0
            guard end == log.detailBytes.count else { throw ByteReaderError.invalid("event details no event holds", at: offset + end) }
            let entries = log.entries
            do {
                try details.withUnsafeBufferPointer { (bytes) throws(ByteReaderError) in
                    try EventDetailNames.check(bytes, from: 0, ends: entries.lazy.map { $0.detailsEnd })
                }
            } catch {
                throw error.moved(by: offset)
            }
            return log
        }
    }
}

extension EventLog: RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { entries.count - head }

    public subscript(position: Int) -> Event {
        precondition(position >= 0 && position < endIndex, "event \(position) out of range")
        let entry = entries[head + position]
        let start = position == 0 ? detailsStart : entries[head + position - 1].detailsEnd
        return Event(cursor: entry.cursor, index: entry.index, type: entry.type, profileID: entry.profileID,
                     customerUserID: entry.customerUserID, atMs: entry.atMs,
                     packedDetails: EventDetailNames.expand(detailBytes.slice(start..<entry.detailsEnd)))
    }
}

extension EventLog: Equatable {
    /// The same events in the same order, however their details lie in memory.
    public static func == (lhs: EventLog, rhs: EventLog) -> Bool {
        lhs.elementsEqual(rhs)
    }
}

/// Writes one event's details in the feed's held form (``EventDetailNames``): the count, then
/// per detail its name's code, the kind byte and the value, as ``EventDetailCoding`` packs them.
/// The details are gathered on the stack and appended in one go (``StagedByteWriter``).
struct HeldDetailsWriter {
    private var writer: StagedByteWriter

    /// Takes over `bytes` (left empty until ``finish()`` hands them back grown).
    init(adopting bytes: inout [UInt8]) {
        var adopted = ByteWriter(adopting: &bytes)
        writer = StagedByteWriter(adopting: &adopted)
    }

    mutating func count(_ count: Int) {
        writer.writeVarUInt(UInt64(count))
    }

    mutating func string(_ name: EventDetailNames.Known, _ value: String) {
        var value = value
        value.withUTF8 { string(name, utf8: $0) }
    }

    /// A string detail given as its UTF-8 bytes (one spelled on the stack: no `String` made).
    mutating func string(_ name: EventDetailNames.Known, utf8 value: UnsafeBufferPointer<UInt8>) {
        writer.writeUInt8(name.code)
        writer.writeUInt8(EventDetailCoding.DetailKind.string.rawValue)
        writer.writeBytes(value)
    }

    mutating func int(_ name: EventDetailNames.Known, _ value: Int64) {
        writer.writeUInt8(name.code)
        writer.writeUInt8(EventDetailCoding.DetailKind.int.rawValue)
        writer.writeVarInt(value)
    }

    mutating func finish() -> [UInt8] {
        writer.finish().takeBytes()
    }
}
