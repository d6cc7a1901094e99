import GatehouseBase
import GatehouseCore

/// The outbox in binary (docs/data-format.md, "Outbox"): its values in change tags 22 and 23,
/// and the whole outbox at the end of a state version 7 head. Targets are written by name, the
/// result of an attempt as a code of its own: no Swift declaration order reaches the bytes.
enum OutboxCoding {
    /// A delivery result's stored code. Codes never change meaning.
    private enum ResultCode: UInt8 {
        case delivered = 0
        case retry = 1
        case failed = 2
        case gone = 3
    }

    static func writeKey(_ key: EventKey, into writer: inout ByteWriter) {
        writer.writeVarUInt(key.cursor)
        writer.writeVarUInt(UInt64(key.index))
    }

    static func readKey(_ reader: inout ByteReader) throws(ByteReaderError) -> EventKey {
        let cursor = try reader.readVarUInt()
        let indexOffset = reader.offset
        guard let index = UInt32(exactly: try reader.readVarUInt()) else { throw ByteReaderError.invalid("event index", at: indexOffset) }
        return EventKey(cursor: cursor, index: index)
    }

    static func writeTarget(_ target: OutboxTarget, into writer: inout ByteWriter) {
        writer.writeString(target.name)
    }

    /// A name no config can give (an empty one) is damage.
    static func readTarget(_ reader: inout ByteReader) throws(ByteReaderError) -> OutboxTarget {
        let start = reader.offset
        let name = try reader.readString()
        guard !name.isEmpty else { throw ByteReaderError.invalid("delivery target", at: start) }
        return OutboxTarget(name: name)
    }

    static func writeOutcome(_ outcome: DeliveryOutcome, into writer: inout ByteWriter) {
        writeTarget(outcome.target, into: &writer)
        writeAttempt(outcome.attempt, into: &writer)
        switch outcome.result {
        case .delivered: writer.writeUInt8(ResultCode.delivered.rawValue)
        case .retry(let atMs):
            writer.writeUInt8(ResultCode.retry.rawValue)
            writer.writeVarInt(atMs)
        case .failed: writer.writeUInt8(ResultCode.failed.rawValue)
        case .gone: writer.writeUInt8(ResultCode.gone.rawValue)
        }
    }

    static func readOutcome(_ reader: inout ByteReader) throws(ByteReaderError) -> DeliveryOutcome {
        let target = try readTarget(&reader)
        let attempt = try readAttempt(&reader)
        let codeOffset = reader.offset
        guard let code = ResultCode(rawValue: try reader.readUInt8()) else {
            throw ByteReaderError.invalid("delivery result", at: codeOffset)
        }
        let result: DeliveryOutcome.Result
        switch code {
        case .delivered: result = .delivered
        case .retry: result = .retry(atMs: try reader.readVarInt())
        case .failed: result = .failed
        case .gone: result = .gone
        }
        return DeliveryOutcome(target: target, attempt: attempt, result: result)
    }

    static func writeAttempt(_ attempt: DeliveryAttempt, into writer: inout ByteWriter) {
        writeKey(attempt.event, into: &writer)
        writer.writeVarUInt(UInt64(attempt.attempt))
        writer.writeVarInt(attempt.atMs)
        writer.writeOptional(attempt.status) { $0.writeVarInt($1) }
        writer.writeVarInt(attempt.latencyMs)
        writer.writeOptional(attempt.error) { $0.writeString($1) }
    }

    static func readAttempt(_ reader: inout ByteReader) throws(ByteReaderError) -> DeliveryAttempt {
        DeliveryAttempt(event: try readKey(&reader), attempt: try readAttemptCount(&reader), atMs: try reader.readVarInt(),
                        status: try reader.readOptional { reader throws(ByteReaderError) in Int(try reader.readVarInt()) },
                        latencyMs: try reader.readVarInt(),
                        error: try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() })
    }

    private static func readAttemptCount(_ reader: inout ByteReader) throws(ByteReaderError) -> UInt16 {
        let start = reader.offset
        guard let count = UInt16(exactly: try reader.readVarUInt()) else { throw ByteReaderError.invalid("attempt count", at: start) }
        return count
    }

    static func writeIdentity(_ identity: EventIdentity, into writer: inout ByteWriter) {
        writer.writeString(identity.appUserID)
        writer.writeString(identity.originalAppUserID)
        writer.writeArray(identity.aliases) { $0.writeString($1) }
        writer.writeArray(identity.entitlementIDs) { $0.writeString($1) }
        writer.writeOptional(identity.currencyName) { $0.writeString($1) }
        writer.writeArray(identity.transferredFrom) { $0.writeString($1) }
        writer.writeArray(identity.transferredTo) { $0.writeString($1) }
        writer.writeArray(identity.pushTo) { $0.writeString($1) }
    }

    static func readIdentity(_ reader: inout ByteReader) throws(ByteReaderError) -> EventIdentity {
        EventIdentity(appUserID: try reader.readString(), originalAppUserID: try reader.readString(),
                      aliases: try readStrings(&reader), entitlementIDs: try readStrings(&reader),
                      currencyName: try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() },
                      transferredFrom: try readStrings(&reader), transferredTo: try readStrings(&reader),
                      pushTo: try readStrings(&reader))
    }

    private static func readStrings(_ reader: inout ByteReader) throws(ByteReaderError) -> [String] {
        try reader.readArray { reader throws(ByteReaderError) in try reader.readString() }
    }
}

extension OutboxCoding {
    /// The endpoints by target name, then the owed events by key: the same outbox always gives
    /// the same bytes.
    static func write(_ outbox: Outbox, into writer: inout ByteWriter) {
        writer.writeArray(outbox.endpoints.sorted { $0.key.name < $1.key.name }) { writer, entry in
            writeTarget(entry.key, into: &writer)
            writeEndpoint(entry.value, into: &writer)
        }
        writer.writeArray(outbox.owed.sorted { $0.key < $1.key }) { writer, entry in
            writeKey(entry.key, into: &writer)
            writeIdentity(entry.value.identity, into: &writer)
            writer.writeVarUInt(UInt64(entry.value.pending))
        }
    }

    private static func writeEndpoint(_ endpoint: OutboxEndpoint, into writer: inout ByteWriter) {
        writer.writeVarUInt(endpoint.startCursor)
        writer.writeOptional(endpoint.disabled) { $0.writeString($1) }
        writer.writeArray(endpoint.pending.sorted { $0.key < $1.key }) { writer, entry in
            writeKey(entry.key, into: &writer)
            writer.writeVarUInt(UInt64(entry.value.attempts))
            writer.writeVarInt(entry.value.nextAttemptMs)
        }
        writer.writeArray(endpoint.failed) { writer, failed in
            writeKey(failed.event, into: &writer)
            writer.writeVarInt(failed.atMs)
            writer.writeString(failed.reason)
            writeIdentity(failed.identity, into: &writer)
        }
        writer.writeOptional(endpoint.lastSuccessMs) { $0.writeVarInt($1) }
        writer.writeOptional(endpoint.lastError) { $0.writeString($1) }
        writer.writeOptional(endpoint.failingSinceMs) { $0.writeVarInt($1) }
        writer.writeArray(endpoint.recent) { writeAttempt($1, into: &$0) }
    }

    /// A target, a pending delivery or an owed event listed twice is damage.
    static func read(_ reader: inout ByteReader) throws(ByteReaderError) -> Outbox {
        var endpoints: [OutboxTarget: OutboxEndpoint] = [:]
        for _ in 0..<(try reader.readCount(maximum: reader.remaining)) {
            let start = reader.offset
            let target = try readTarget(&reader)
            guard endpoints.updateValue(try readEndpoint(&reader), forKey: target) == nil else {
                throw ByteReaderError.invalid("delivery target \(target.name) listed twice", at: start)
            }
        }
        var owed: [EventKey: OwedEvent] = [:]
        for _ in 0..<(try reader.readCount(maximum: reader.remaining)) {
            let start = reader.offset
            let key = try readKey(&reader)
            let event = OwedEvent(identity: try readIdentity(&reader), pending: try reader.readCount())
            guard owed.updateValue(event, forKey: key) == nil else {
                throw ByteReaderError.invalid("owed event \(key) listed twice", at: start)
            }
        }
        return Outbox(endpoints: endpoints, owed: owed)
    }

    private static func readEndpoint(_ reader: inout ByteReader) throws(ByteReaderError) -> OutboxEndpoint {
        let startCursor = try reader.readVarUInt()
        let disabled = try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() }
        var pending: [EventKey: PendingDelivery] = [:]
        for _ in 0..<(try reader.readCount(maximum: reader.remaining)) {
            let start = reader.offset
            let key = try readKey(&reader)
            let delivery = PendingDelivery(attempts: try readAttemptCount(&reader), nextAttemptMs: try reader.readVarInt())
            guard pending.updateValue(delivery, forKey: key) == nil else {
                throw ByteReaderError.invalid("pending delivery \(key) listed twice", at: start)
            }
        }
        var endpoint = OutboxEndpoint(startCursor: startCursor, disabled: disabled, pending: pending)
        endpoint.failed = try reader.readArray { reader throws(ByteReaderError) in
            FailedDelivery(event: try readKey(&reader), atMs: try reader.readVarInt(), reason: try reader.readString(),
                           identity: try readIdentity(&reader))
        }
        endpoint.lastSuccessMs = try reader.readOptional { reader throws(ByteReaderError) in try reader.readVarInt() }
        endpoint.lastError = try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() }
        endpoint.failingSinceMs = try reader.readOptional { reader throws(ByteReaderError) in try reader.readVarInt() }
        endpoint.recent = try reader.readArray { reader throws(ByteReaderError) in try readAttempt(&reader) }
        return endpoint
    }
}
