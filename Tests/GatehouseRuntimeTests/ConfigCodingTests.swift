import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import Testing

/// The config's two layouts (docs/data-format.md, "Config"): version 1, in change tag 1 and state
/// versions 1–3, and version 2, in change tag 17 and state version 4, which is written and adds
/// offerings' descriptions and metadata and the project's limits. A change here is a format
/// change.
@Suite struct ConfigLayoutGoldenBytes {
    static func str(_ text: String) -> String { PurchaseRecordGoldenBytes.str(text) }

    /// A config with an offering, in the fields both layouts hold.
    static let config = ProjectConfig(
        products: [ProductDefinition(id: "m", type: .subscription)],
        offerings: [OfferingDefinition(id: "o", isDefault: true, packages: [PackageDefinition(id: "p", type: .monthly, product: "m")])]
    )

    /// `config` with the offering's description and metadata and a limit, which only version 2
    /// holds.
    static var configWithTexts: ProjectConfig {
        var config = Self.config
        config.offerings[0].description = "For all"
        config.offerings[0].metadataJSON = #"{"k":1}"#
        config.limits.sdkCreatesPerSecond = 25
        return config
    }

    /// Entitlements and products, then currencies.
    static let start = "00" + "01" + str("m") + str("subscription") + "00" + "00" + "00"
    /// The offering's id, is-default and packages.
    static let offering = str("o") + "01" + "01" + str("p") + str("monthly") + str("m")
    /// Login, restore, grace period, test store, App Store.
    static let settings = str("alias") + str("transfer") + "00" + "00" + "00"

    static let version1 = start + "01" + offering + settings
    /// The offering's description and metadata follow its packages; the limits (25, zigzag 50)
    /// follow the settings.
    static let version2 = start + "01" + offering + "01" + str("For all") + "01" + str(#"{"k":1}"#) + settings + "32"
    /// No description, no metadata, the default limit (1000, zigzag 2000).
    static let version2WithoutTexts = start + "01" + offering + "00" + "00" + settings + "d00f"

    /// Incarnation 5, at 0 ms, one change.
    static let batchStart = "05" + "00" + "01"

    @Test func configReplacedIsWrittenWithTag17InLayout2() {
        let record = RuntimeRecord.projectChanged(5, .init([.configReplaced(Self.configWithTexts)], atMs: 0)).logRecord
        #expect(Hex.encode(record.payload) == Self.batchStart + "11" + Self.version2)
        let plain = RuntimeRecord.projectChanged(5, .init([.configReplaced(Self.config)], atMs: 0)).logRecord
        #expect(Hex.encode(plain.payload) == Self.batchStart + "11" + Self.version2WithoutTexts)
    }

    @Test func configReplacedRecordsOfBothLayoutsRead() throws {
        let tag17 = WALRecord(kind: 16, payload: try #require(Hex.decode(Self.batchStart + "11" + Self.version2)))
        #expect(try RuntimeRecord(tag17) == .projectChanged(5, .init([.configReplaced(Self.configWithTexts)], atMs: 0)))
        let tag1 = WALRecord(kind: 16, payload: try #require(Hex.decode(Self.batchStart + "01" + Self.version1)))
        #expect(try RuntimeRecord(tag1) == .projectChanged(5, .init([.configReplaced(Self.config)], atMs: 0)))
    }

    /// Each layout read as the other is refused, never misread: version 1's bytes end early, and
    /// version 2's have bytes left over.
    @Test func aLayoutReadAsTheOtherIsRefused() throws {
        let asVersion2 = WALRecord(kind: 16, payload: try #require(Hex.decode(Self.batchStart + "11" + Self.version1)))
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(asVersion2) }
        let asVersion1 = WALRecord(kind: 16, payload: try #require(Hex.decode(Self.batchStart + "01" + Self.version2)))
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(asVersion1) }
    }

    static func state(_ config: ProjectConfig) -> ProjectState {
        ProjectState(id: try! ProjectID(validating: "acme"), name: "Acme", createdMs: 0,
                     keys: KeyDigests(publicKey: SecretDigest(bytes: [UInt8](repeating: 0xAA, count: 32))!,
                                      secretKey: SecretDigest(bytes: [UInt8](repeating: 0xBB, count: 32))!),
                     keyGenerations: [.public: 1, .secret: 1], config: config, sequence: 1, configCursor: 1,
                     profiles: ProfileDirectory(), events: EventLog(), purchases: PurchaseBook())
    }

    /// A state version `version` body holding `config` (hex) in its head, with no profiles,
    /// events, purchases or balances.
    static func body(version: String, config: String) -> String {
        let head = str("acme") + str("Acme") + "00" + String(repeating: "aa", count: 32) + String(repeating: "bb", count: 32)
            + "01" + "01" + config + "01" + "01" + "00" + "00"
        let sections = [head, "00" + "00", RecordGoldenBytes.emptyBook, RecordGoldenBytes.emptyLedger]
        return version + sections.map { Version3Fixtures.varint($0.count / 2) }.joined() + sections.joined()
    }

    @Test func stateVersions4And5HoldLayout2() throws {
        let golden = Self.body(version: "05", config: Self.version2)
        #expect(Hex.encode(StateCoding.encode(Self.state(Self.configWithTexts))) == golden)
        for version in ["04", "05"] {
            let body = try #require(Hex.decode(Self.body(version: version, config: Self.version2)))
            #expect(try Version3Fixtures.decodeBothWays(body) == Self.state(Self.configWithTexts))
        }
    }

    @Test func stateVersion3WithAnOfferingStillReads() throws {
        let old = try #require(Hex.decode(Self.body(version: "03", config: Self.version1)))
        let decoded = try Version3Fixtures.decodeBothWays(old)
        #expect(decoded == Self.state(Self.config))
        // Written again, it is version 5: the offering with no description or metadata, the
        // default limits.
        #expect(Hex.encode(StateCoding.encode(decoded)) == Self.body(version: "05", config: Self.version2WithoutTexts))
    }
}

/// Offerings' descriptions and metadata survive the log and snapshots as they came.
@Suite struct OfferingTextsCoding {
    static var config: ProjectConfig {
        var config = ConfigLayoutGoldenBytes.configWithTexts
        config.offerings[0].description = "Ünïcode, \"quoted\"\nand long: " + String(repeating: "x", count: 900)
        config.offerings[0].metadataJSON = ##"{"colors":{"bg":"#fff"},"n":[1,2.5,null],"s":"ü"}"##
        config.offerings.append(OfferingDefinition(id: "bare"))
        return config
    }

    @Test func aConfigWithTextsRoundTripsThroughARecordAndASnapshot() throws {
        let record = RuntimeRecord.projectChanged(3, .init([.configReplaced(Self.config)], atMs: 9))
        #expect(try RuntimeRecord(record.logRecord) == record)
        let state = ConfigLayoutGoldenBytes.state(Self.config)
        #expect(try StateCoding.decode(StateCoding.encode(state)).config == Self.config)
    }

    /// A snapshot whose offering breaks a bound is refused like any invalid config.
    @Test func aSnapshotWithOversizedMetadataIsRefused() {
        var config = Self.config
        config.offerings[0].metadataJSON = #"{"k":""# + String(repeating: "x", count: ProjectConfig.Limits.offeringMetadataBytes) + #""}"#
        let bytes = StateCoding.encode(ConfigLayoutGoldenBytes.state(config))
        #expect(throws: ByteReaderError.self) { try StateCoding.decode(bytes) }
    }
}
