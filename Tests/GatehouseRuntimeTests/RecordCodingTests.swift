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
