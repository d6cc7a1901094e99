import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import Testing

/// The runtime's log records and snapshot bodies read back exactly what was written, and
/// damaged bytes are refused rather than guessed at.
@Suite struct RecordCoding {
    static let keys = KeyDigests(publicKey: SecretDigest(secret: "pk"), secretKey: SecretDigest(secret: "sk"))

    static var fullConfig: ProjectConfig {
        ProjectConfig(
            entitlements: [EntitlementDefinition(id: "pro"), EntitlementDefinition(id: "gold")],
            products: [
                ProductDefinition(id: "pro_monthly", type: .subscription, entitlements: ["pro"],
                                  grants: [CurrencyGrant(currency: "COINS", amount: 100, on: .both)]),
                ProductDefinition(id: "lifetime", type: .nonConsumable, entitlements: ["pro", "gold"]),
            ],
            currencies: [CurrencyDefinition(code: "COINS", name: "Coins")],
            offerings: [OfferingDefinition(id: "default", isDefault: true,
                                           packages: [PackageDefinition(id: "m", type: .monthly, product: "pro_monthly")])],
            login: .switch, restore: .keep, gracePeriodMs: 86_400_000,
            stores: StoreSettings(test: true, appStore: AppStoreSettings(bundleID: "com.example", environment: .sandbox, appAppleID: 42))
        )
    }

    static var state: ProjectState {
        var state = ProjectState(id: try! ProjectID(validating: "acme"), name: "Acme Ünïcode", createdMs: 1_700_000_000_000, keys: keys)
        state.apply(.configReplaced(fullConfig))
        state.apply(.keyRotated(.public, SecretDigest(secret: "pk2")))
        return state
    }

    @Test(arguments: [
        RuntimeRecord.projectCreated(7, state),
        .projectDeleted(9),
        .projectRestored(11, snapshotFile: "restore-1-abc.snap", replacing: 7),
        .projectRestored(12, snapshotFile: "restore-2-def.snap", replacing: nil),
        .projectChanged(7, .configReplaced(fullConfig)),
        .projectChanged(7, .configReplaced(.empty)),
        .projectChanged(7, .keyRotated(.secret, SecretDigest(secret: "sk2"))),
    ])
    func everyRecordRoundTrips(_ record: RuntimeRecord) throws {
        #expect(try RuntimeRecord(record.logRecord) == record)
    }

    @Test func stateRoundTripsThroughASnapshotBody() throws {
        let decoded = try StateCoding.decode(StateCoding.encode(Self.state))
        #expect(decoded.id == Self.state.id)
        #expect(decoded.name == Self.state.name)
        #expect(decoded.config == Self.state.config)
        #expect(decoded.keys == Self.state.keys)
        #expect(decoded.keyGenerations == Self.state.keyGenerations)
        #expect(decoded.sequence == Self.state.sequence)
        #expect(decoded.configCursor == Self.state.configCursor)
    }

    @Test func everyTruncationOfARecordIsRefused() {
        let bytes = RuntimeRecord.projectCreated(3, Self.state).logRecord
        for length in 0..<bytes.payload.count {
            let cut = WALRecord(kind: bytes.kind, payload: Array(bytes.payload.prefix(length)))
            #expect(throws: ByteReaderError.self) { try RuntimeRecord(cut) }
        }
    }

    @Test func trailingBytesAndUnknownKindsAreRefused() {
        var record = RuntimeRecord.projectDeleted(3).logRecord
        record.payload.append(0)
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(record) }
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(WALRecord(kind: 999, payload: [1])) }
    }

    @Test func snapshotBodyWithAnInvalidConfigIsRefused() {
        var config = ProjectConfig.empty
        config.products = [ProductDefinition(id: "p", type: .subscription, entitlements: ["missing"])]
        let state = ProjectState(id: try! ProjectID(validating: "x"), name: "x", createdMs: 0, keys: Self.keys,
                                 keyGenerations: [.public: 1, .secret: 1], config: config, sequence: 1, configCursor: 1)
        #expect(throws: ByteReaderError.self) { try StateCoding.decode(StateCoding.encode(state)) }
    }
}

/// The exact bytes of runtime records: what old logs and snapshots hold must keep meaning the
/// same. A change here is a format change (docs/data-format.md, "Runtime records").
@Suite struct RecordGoldenBytes {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    static let state = ProjectState(
        id: try! ProjectID(validating: "acme"), name: "Acme", createdMs: 1_700_000_000_000,
        keys: KeyDigests(publicKey: SecretDigest(bytes: [UInt8](repeating: 0xAA, count: 32))!,
                         secretKey: SecretDigest(bytes: [UInt8](repeating: 0xBB, count: 32))!),
        keyGenerations: [.public: 2, .secret: 1],
        config: ProjectConfig(entitlements: [EntitlementDefinition(id: "pro")],
                              products: [ProductDefinition(id: "m", type: .subscription, entitlements: ["pro"],
                                                           grants: [CurrencyGrant(currency: "C", amount: 5, on: .renewal)])],
                              currencies: [CurrencyDefinition(code: "C")]),
        sequence: 3, configCursor: 2
    )

    @Test func projectCreatedRecord() {
        let record = RuntimeRecord.projectCreated(1, Self.state).logRecord
        #expect(record.kind == 1)
        #expect(Self.hex(record.payload) == Self.goldenCreated, "\(Self.hex(record.payload))")
    }

    @Test func smallRecords() {
        #expect(RuntimeRecord.projectDeleted(300).logRecord.kind == 2)
        #expect(Self.hex(RuntimeRecord.projectDeleted(300).logRecord.payload) == "ac02")
        let restored = RuntimeRecord.projectRestored(5, snapshotFile: "r.snap", replacing: 4).logRecord
        #expect(restored.kind == 3)
        #expect(Self.hex(restored.payload) == "0506722e736e61700104")
        let rotated = RuntimeRecord.projectChanged(5, .keyRotated(.secret, SecretDigest(bytes: [UInt8](repeating: 1, count: 32))!)).logRecord
        #expect(rotated.kind == 17)
        #expect(Self.hex(rotated.payload) == "0506736563726574" + String(repeating: "01", count: 32))
    }

    static let goldenCreated = "01010461636d650441636d6580a0abfef962" + String(repeating: "aa", count: 32) + String(repeating: "bb", count: 32)
        + "0201" + "010370726f" + "01016d0c737562736372697074696f6e010370726f0101430a0772656e6577616c" + "0101430143" + "00"
        + "05616c696173087472616e73666572" + "00" + "00" + "00" + "03" + "02"
}
