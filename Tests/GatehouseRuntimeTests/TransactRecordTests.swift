import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import Testing

/// A new key's `currency.transact` is logged from its fields (`RuntimeRecord.projectChanged(_:_:)`
/// with a `ProjectState.TransactChange`), and replayed from the general batch it stands for: the
/// record's bytes must be exactly that batch's (docs/data-format.md, "Runtime records").
@Suite struct TransactRecordCoding {
    @Test(arguments: [
        (Int64(25), "k-new", String?.none),
        (-40, "k-debit", "refund of an order"),
        (1, String(repeating: "key-", count: 32), nil),
        (7, "ключ-🔑", "größer"),
        (CurrencyLedger.balanceMax - 500, "k-max", String(repeating: "r", count: 500)),
    ])
    func theRecordIsTheBatchsRecord(_ amount: Int64, _ key: String, _ reason: String?) throws {
        var state = RecordCoding.state
        // Named by the alias merged into it, after a first credit.
        let first = try state.transact(profile: RecordCoding.profileB, currency: "COINS", amount: 500, key: "first", reason: nil,
                                       nowMs: 10)
        state.apply(try #require(first.change))
        let decision = try state.transact(profile: RecordCoding.profileB, currency: "COINS", amount: amount, key: key,
                                          reason: reason, nowMs: 1_700_000_000_123)
        let change = try #require(decision.change)
        let record = RuntimeRecord.projectChanged(77, change)
        #expect(record == RuntimeRecord.projectChanged(77, change.batch).logRecord)
        #expect(try RuntimeRecord(record) == .projectChanged(77, change.batch))
    }
}
