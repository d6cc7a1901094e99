@testable import GatehouseStorage
import Testing

/// One `append` call's records, one or many, come out in the order they went in.
@Suite struct PendingRecordsOrder {
    private static let a = WALRecord(kind: 1, payload: [1])
    private static let b = WALRecord(kind: 2, payload: [2, 2])

    @Test func oneRecordIsOneElement() {
        #expect(Array(PendingRecords.one(Self.a)) == [Self.a])
    }

    @Test func manyRecordsKeepTheirOrder() {
        #expect(Array(PendingRecords.many([Self.a, Self.b, Self.a])) == [Self.a, Self.b, Self.a])
        #expect(Array(PendingRecords.many([])).isEmpty)
    }
}
