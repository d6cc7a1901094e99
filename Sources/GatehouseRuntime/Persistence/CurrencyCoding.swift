import GatehouseBase
import GatehouseCore

/// Balances' histories, term grants and idempotency keys in binary (docs/data-format.md).
enum CurrencyCoding {
    static func write(_ movement: CurrencyMovement, into writer: inout some ByteWriting) {
        writer.writeString(movement.currency)
        writer.writeVarInt(movement.amount)
        writer.writeEnum(movement.source)
        writer.writeString(movement.ref)
        writer.writeOptional(movement.reason) { $0.writeString($1) }
    }

    /// An amount no rule could decide (0, or beyond what a balance can hold) is damage.
    static func readMovement(_ reader: inout ByteReader) throws(ByteReaderError) -> CurrencyMovement {
        let currency = try reader.readString()
        let amountOffset = reader.offset
        let amount = try reader.readVarInt()
        guard amount != 0, (-CurrencyLedger.balanceMax...CurrencyLedger.balanceMax).contains(amount) else {
            throw ByteReaderError.invalid("currency amount \(amount)", at: amountOffset)
        }
        return CurrencyMovement(
            currency: currency, amount: amount, source: try reader.readEnum(CurrencySource.self), ref: try reader.readString(),
            reason: try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() })
    }

    static func write(_ grant: TermGrant, into writer: inout ByteWriter) {
        var term = grant.term
        var purchaseID = grant.purchase.id
        term.withUTF8 { term in
            purchaseID.withUTF8 { purchaseID in
                write(CurrencyLedger.LentTermGrant(term: term, store: grant.purchase.store, purchaseID: purchaseID,
                                                   profile: grant.profile, lineCount: grant.lines.count), into: &writer)
            }
        }
        for line in grant.lines { write(line, into: &writer) }
    }

    /// A grant up to its lines (their count included), which follow it.
    private static func write(_ grant: CurrencyLedger.LentTermGrant, into writer: inout ByteWriter) {
        writer.writeBytes(grant.term)
        writer.writeString(grant.store)
        writer.writeBytes(grant.purchaseID)
        writer.writeOptional(grant.profile) { ProfileCoding.writeID($1, into: &$0) }
        writer.writeVarUInt(UInt64(grant.lineCount))
    }

    private static func write(_ line: TermGrant.Line, into writer: inout ByteWriter) {
        writer.writeString(line.currency)
        writer.writeVarInt(line.granted)
        writer.writeVarInt(line.owedBack)
        writer.writeVarInt(line.takenBack)
    }

    static func readGrant(_ reader: inout ByteReader) throws(ByteReaderError) -> TermGrant {
        TermGrant(
            term: try reader.readString(), purchase: PurchaseKey(store: try reader.readString(), id: try reader.readString()),
            profile: try reader.readOptional { reader throws(ByteReaderError) in try ProfileCoding.readID(&reader) },
            lines: try reader.readArray { reader throws(ByteReaderError) in
                TermGrant.Line(currency: try reader.readString(), granted: try reader.readVarInt(),
                               owedBack: try reader.readVarInt(), takenBack: try reader.readVarInt())
            })
    }

    static func write(_ record: IdempotencyRecord, into writer: inout some ByteWriting) {
        ProfileCoding.writeID(record.profile, into: &writer)
        writer.writeString(record.currency)
        writer.writeVarInt(record.amount)
        writer.writeOptional(record.reason) { $0.writeString($1) }
        writer.writeString(record.transactionID)
        writer.writeVarInt(record.balance)
        writer.writeVarInt(record.atMs)
    }

    static func readRecord(_ reader: inout ByteReader) throws(ByteReaderError) -> IdempotencyRecord {
        IdempotencyRecord(
            profile: try ProfileCoding.readID(&reader), currency: try reader.readString(), amount: try reader.readVarInt(),
            reason: try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() },
            transactionID: try reader.readString(), balance: try reader.readVarInt(), atMs: try reader.readVarInt())
    }

    /// Histories by profile then currency, term grants by term, keys by key: equal ledgers
    /// write equal bytes. A history is checked as it is read: each entry's balance is the one
    /// before plus its amount, within 0 … max (the first's from whatever its list held before it).
    ///
    /// The ledger lends its histories and grants in order straight from its dense tables (ASCII
    /// terms and keys sorted by their bytes); nothing is built per entry or per grant.
    static func write(_ ledger: CurrencyLedger, into writer: inout ByteWriter) {
        writer.writeVarUInt(UInt64(ledger.historyCount))
        ledger.forEachStoredHistory { profile, currency, count in
            ProfileCoding.writeID(profile, into: &writer)
            writer.writeString(currency)
            writer.writeVarUInt(UInt64(count))
        } entry: { entry in
            writer.writeBytes(entry.transactionID)
            writer.writeVarInt(entry.amount)
            writer.writeVarInt(entry.balance)
            writer.writeEnum(entry.source)
            writer.writeBytes(entry.ref)
            writer.writeVarInt(entry.atMs)
        }
        writer.writeVarUInt(UInt64(ledger.termGrantCount))
        ledger.forEachStoredTermGrant { grant in
            write(grant, into: &writer)
        } line: { line in
            write(line, into: &writer)
        }
        writer.writeArray(ledger.idempotencyByKey) { writer, pair in
            writer.writeString(pair.key)
            write(pair.record, into: &writer)
        }
    }

    /// One history as read, its balances checked: the balance before its first entry is within
    /// 0 … max (older entries may have been dropped), and each entry moves it by its non-zero
    /// amount, within 0 … max; no history is empty.
    private static func readHistory(_ reader: inout ByteReader, start: Int)
        throws(ByteReaderError) -> (ProfileID, String, [CurrencyEntry])
    {
        let profile = try ProfileCoding.readID(&reader)
        let currency = try reader.readString()
        let entries = try reader.readArray { reader throws(ByteReaderError) in
            CurrencyEntry(transactionID: try reader.readString(), amount: try reader.readVarInt(),
                          balance: try reader.readVarInt(), source: try reader.readEnum(CurrencySource.self),
                          ref: try reader.readString(), atMs: try reader.readVarInt())
        }
        // A list keeps only its newest entries, so the first may start from any balance the
        // ledger can hold; from there each entry moves it by its amount.
        var balance = (entries.first?.balance ?? 0) &- (entries.first?.amount ?? 0)
        guard (0...CurrencyLedger.balanceMax).contains(balance) else {
            throw ByteReaderError.invalid("currency history of \(profile) \(currency)", at: start)
        }
        for entry in entries {
            let (sum, overflow) = balance.addingReportingOverflow(entry.amount)
            guard !overflow, entry.amount != 0, entry.balance == sum, (0...CurrencyLedger.balanceMax).contains(sum) else {
                throw ByteReaderError.invalid("currency history of \(profile) \(currency)", at: start)
            }
            balance = sum
        }
        guard !entries.isEmpty else { throw ByteReaderError.invalid("empty currency history", at: start) }
        return (profile, currency, entries)
    }

    /// Each history goes into the ledger as it is read (no dictionary of them on the way).
    static func readLedger(_ reader: inout ByteReader) throws(ByteReaderError) -> CurrencyLedger {
        let start = reader.offset
        var ledger = CurrencyLedger()
        // Each history takes more than one byte: a count beyond the bytes left is damage, not
        // something to reserve room for.
        let countStart = reader.offset
        let count = try reader.readCount()
        guard count <= reader.remaining else { throw ByteReaderError.truncated(at: countStart) }
        ledger.reserveHistories(count, entries: count)
        for _ in 0..<count {
            let (profile, currency, entries) = try readHistory(&reader, start: start)
            guard ledger.restoreHistory(of: profile, currency, entries) else {
                throw ByteReaderError.invalid("currency history twice", at: start)
            }
        }
        let grants = try reader.readArray { reader throws(ByteReaderError) in try readGrant(&reader) }
        let keys = try reader.readArray { reader throws(ByteReaderError) in
            (key: try reader.readString(), record: try readRecord(&reader))
        }
        guard ledger.restoreTermGrants(grants), ledger.restoreIdempotency(keys) else {
            throw ByteReaderError.invalid("currency ledger with a key listed twice", at: start)
        }
        return ledger
    }
}
