import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import Testing

/// A state with what state version 7 added: the config's webhooks and OneSignal, and an outbox
/// with several endpoints (one disabled), pending, failed and recent deliveries, and owed events.
enum Version7Fixtures {
    static let profile = ProfileID(high: 1, low: 2, tag: 3)

    static let alice = EventIdentity(appUserID: "alice", originalAppUserID: "$RCAnonymousID:0a000000000000000b00000000000000",
                                     aliases: ["gh_a", "alice"], entitlementIDs: ["pro"], currencyName: "Coins",
                                     transferredFrom: ["bob"], transferredTo: ["alice"], pushTo: ["alice", "bob"])

    static let orders = OutboxEndpoint(
        startCursor: 2,
        pending: [EventKey(cursor: 9, index: 1): PendingDelivery(attempts: 3, nextAttemptMs: 1_700_000_400_000),
                  EventKey(cursor: 4, index: 0): PendingDelivery(attempts: 0, nextAttemptMs: 1_700_000_000_005),
                  EventKey(cursor: 9, index: 0): PendingDelivery(attempts: 1, nextAttemptMs: -3)],
        // Not in key order: failed deliveries keep the order they failed in.
        failed: [FailedDelivery(event: EventKey(cursor: 7, index: 0), atMs: 20, reason: "attempts_exhausted", identity: alice),
                 FailedDelivery(event: EventKey(cursor: 3, index: 2), atMs: 21, reason: "feed_overflow", identity: .nobody)],
        lastSuccessMs: 11, lastError: "HTTP 503", failingSinceMs: 12,
        recent: [DeliveryAttempt(event: EventKey(cursor: 9, index: 1), attempt: 3, atMs: 30, status: 503, latencyMs: 250,
                                 error: "HTTP 503"),
                 DeliveryAttempt(event: EventKey(cursor: 4, index: 0), attempt: 1, atMs: 29, status: nil, latencyMs: 30_000,
                                 error: "timed out"),
                 DeliveryAttempt(event: EventKey(cursor: 2, index: 0), attempt: 1, atMs: 10, status: 200, latencyMs: 4, error: nil)])

    static var outbox: Outbox {
        Outbox(
            endpoints: [
                .webhook("orders"): orders,
                .webhook("audit"): OutboxEndpoint(startCursor: 5, disabled: "gone", lastError: "HTTP 410"),
                .oneSignal: OutboxEndpoint(startCursor: 0, pending: [EventKey(cursor: 9, index: 1): PendingDelivery(attempts: 0, nextAttemptMs: 40)]),
            ],
            owed: [EventKey(cursor: 9, index: 1): OwedEvent(identity: alice, pending: 2),
                   EventKey(cursor: 4, index: 0): OwedEvent(identity: .nobody, pending: 1),
                   EventKey(cursor: 9, index: 0): OwedEvent(identity: alice, pending: 1)])
    }

    static var state: ProjectState {
        ProjectState(id: try! ProjectID(validating: "acme"), name: "Acme", createdMs: 0,
                     keys: KeyDigests(publicKey: SecretDigest(bytes: [UInt8](repeating: 0xAA, count: 32))!,
                                      secretKey: SecretDigest(bytes: [UInt8](repeating: 0xBB, count: 32))!),
                     keyGenerations: [.public: 1, .secret: 1], config: ConfigLayoutGoldenBytes.configWithOutbound, sequence: 9,
                     configCursor: 1, profiles: ProfileDirectory(), events: EventLog(), purchases: PurchaseBook(), outbox: outbox)
    }

    /// The bytes of `outbox` alone, as they end the head.
    static func bytes(of outbox: Outbox) -> [UInt8] {
        var writer = ByteWriter()
        OutboxCoding.write(outbox, into: &writer)
        return writer.bytes
    }

    /// A body of `state` whose head holds `outbox` (hex) instead of its own outbox, and where
    /// that outbox starts in the body.
    static func body(outbox: String) throws -> (body: [UInt8], outboxOffset: Int) {
        var sections = StateCoding.sectionBytes(of: state)
        var web = ByteWriter()
        WebCoding.write(state.web, into: &web)
        let headBeforeOutbox = sections[0].dropLast(bytes(of: state.outbox).count + web.bytes.count)
        sections[0] = Array(headBeforeOutbox) + (try #require(Hex.decode(outbox))) + web.bytes
        let body = StateCoding.body(sections: sections)
        let headOffset = body.count - sections.reduce(0) { $0 + $1.count }
        return (body, headOffset + headBeforeOutbox.count)
    }
}

/// The outbox in a state version 7 head. A change to the golden bytes is a format change
/// (docs/data-format.md, "Outbox").
@Suite struct OutboxStateCoding {
    typealias F = Version3Fixtures
    typealias V = Version7Fixtures
    static func str(_ text: String) -> String { PurchaseRecordGoldenBytes.str(text) }

    @Test func aStateWithWebhooksOneSignalAndAnOutboxRoundTripsByteForByte() throws {
        let body = StateCoding.encode(V.state)
        #expect(body.first == UInt8(StateCoding.version))
        let decoded = try F.decodeBothWays(body)
        #expect(decoded == V.state)
        #expect(decoded.outbox == V.outbox)
        #expect(decoded.config.webhooks == ConfigLayoutGoldenBytes.configWithOutbound.webhooks)
        #expect(decoded.config.integrations.oneSignal == ConfigLayoutGoldenBytes.configWithOutbound.integrations.oneSignal)
        #expect(StateCoding.encode(decoded) == body)
        let record = RuntimeRecord.projectCreated(4, V.state)
        #expect(try RuntimeRecord(record.logRecord) == record)
    }

    /// Dictionaries come out in another order in every process: the bytes must not.
    @Test func theSameOutboxBuiltInAnotherOrderWritesTheSameBytes() {
        var endpoints: [OutboxTarget: OutboxEndpoint] = [:]
        for (target, endpoint) in V.outbox.endpoints.sorted(by: { $0.key > $1.key }) { endpoints[target] = endpoint }
        var owed: [EventKey: OwedEvent] = [:]
        for (key, event) in V.outbox.owed.sorted(by: { $0.key > $1.key }) { owed[key] = event }
        #expect(V.bytes(of: Outbox(endpoints: endpoints, owed: owed)) == V.bytes(of: V.outbox))
    }

    /// Endpoints by target name, pending deliveries by key, then the owed events by key.
    @Test func anOutboxWritesTheseBytes() throws {
        let outbox = Outbox(
            endpoints: [
                .oneSignal: OutboxEndpoint(
                    startCursor: 2, pending: [EventKey(cursor: 5, index: 1): PendingDelivery(attempts: 1, nextAttemptMs: 100)],
                    failed: [FailedDelivery(event: EventKey(cursor: 4, index: 0), atMs: 9, reason: "disabled", identity: .nobody)],
                    lastError: "timeout", failingSinceMs: 3,
                    recent: [DeliveryAttempt(event: EventKey(cursor: 5, index: 1), attempt: 1, atMs: 3, status: nil, latencyMs: 30_000,
                                             error: "timeout")]),
                .webhook("orders"): OutboxEndpoint(startCursor: 300, disabled: "failing", lastSuccessMs: -1,
                                                   recent: [DeliveryAttempt(event: EventKey(cursor: 1, index: 0), attempt: 2, atMs: 0,
                                                                            status: 204, latencyMs: 1, error: nil)]),
            ],
            owed: [EventKey(cursor: 5, index: 1): OwedEvent(
                identity: EventIdentity(appUserID: "al", originalAppUserID: "$RCAnonymousID:ab", aliases: ["gh_x"],
                                        entitlementIDs: ["pro"], currencyName: "Coins", pushTo: ["al"]),
                pending: 1)])
        // An identity: app user id, original app user id, aliases, entitlement ids, currency
        // name (optional), transferred from, transferred to, push to.
        let nobody = "00" + "00" + "00" + "00" + "00" + "00" + "00" + "00"
        let golden = "02"
            // `integrations.onesignal` sorts before `orders`: start cursor 2, enabled.
            + Self.str("integrations.onesignal") + "02" + "00"
            // One pending: evt_5_1, 1 attempt, next at 100 ms (zigzag 200).
            + "01" + "05" + "01" + "01" + "c801"
            // One failed: evt_4_0, at 9 ms, "disabled", about nobody.
            + "01" + "04" + "00" + "12" + Self.str("disabled") + nobody
            // No success yet, the last error, failing since 3 ms.
            + "00" + "01" + Self.str("timeout") + "01" + "06"
            // One recent attempt: evt_5_1, attempt 1, at 3 ms, no status, 30 s (zigzag 60000), the error.
            + "01" + "05" + "01" + "01" + "06" + "00" + "e0d403" + "01" + Self.str("timeout")
            // `orders`: start cursor 300, disabled as failing; no pending, no failed; last success
            // at -1 ms (zigzag 1); no error, not failing; one attempt answered 204 (zigzag 408).
            + Self.str("orders") + "ac02" + "01" + Self.str("failing") + "00" + "00" + "01" + "01" + "00" + "00"
            + "01" + "01" + "00" + "02" + "00" + "01" + "9803" + "02" + "00"
            // One owed event: evt_5_1, its identity, 1 pending delivery.
            + "01" + "05" + "01" + Self.str("al") + Self.str("$RCAnonymousID:ab") + "01" + Self.str("gh_x") + "01" + Self.str("pro")
            + "01" + Self.str("Coins") + "00" + "00" + "01" + Self.str("al") + "01"
        #expect(Hex.encode(V.bytes(of: outbox)) == golden, "\(Hex.encode(V.bytes(of: outbox)))")
        var reader = ByteReader(try #require(Hex.decode(golden)))
        #expect(try OutboxCoding.read(&reader) == outbox)
        #expect(reader.isAtEnd)
    }

    @Test func everyTruncationOfTheOutboxIsRefused() throws {
        let outbox = Hex.encode(V.bytes(of: V.outbox))
        for length in stride(from: 0, to: outbox.count, by: 2) {
            let (body, _) = try V.body(outbox: String(outbox.prefix(length)))
            #expect(throws: ByteReaderError.self, "cut at \(length / 2)") { try F.decodeBothWays(body) }
        }
        let (whole, _) = try V.body(outbox: outbox)
        #expect(try F.decodeBothWays(whole) == V.state)
    }

    @Test func everyTruncationOfTheBodyIsRefused() {
        let bytes = StateCoding.encode(V.state)
        for length in 0..<bytes.count {
            #expect(throws: ByteReaderError.self, "cut at \(length)") { try StateCoding.decode(Array(bytes.prefix(length))) }
        }
    }

    /// An endpoint with nothing in it: start cursor 1, enabled, no pending, failed, success,
    /// error, failing time or attempts.
    static let emptyEndpoint = "01" + "00" + "00" + "00" + "00" + "00" + "00" + "00"
    static let nobody = "00" + "00" + "00" + "00" + "00" + "00" + "00" + "00"

    @Test func aTargetListedTwiceIsRefusedWhereItIs() throws {
        let (body, offset) = try V.body(outbox: "02" + Self.str("a") + Self.emptyEndpoint + Self.str("a") + Self.emptyEndpoint + "00")
        #expect(throws: ByteReaderError.invalid("delivery target a listed twice", at: offset + 11)) { try F.decodeBothWays(body) }
    }

    @Test func aPendingDeliveryListedTwiceIsRefusedWhereItIs() throws {
        let pending = "0300" + "00" + "00"
        let endpoint = "01" + "00" + "02" + pending + pending + "00" + "00" + "00" + "00" + "00"
        let (body, offset) = try V.body(outbox: "01" + Self.str("a") + endpoint + "00")
        #expect(throws: ByteReaderError.invalid("pending delivery evt_3_0 listed twice", at: offset + 10)) { try F.decodeBothWays(body) }
    }

    @Test func anOwedEventListedTwiceIsRefusedWhereItIs() throws {
        let (body, offset) = try V.body(outbox: "00" + "02" + "0300" + Self.nobody + "01" + "0300" + Self.nobody + "01")
        #expect(throws: ByteReaderError.invalid("owed event evt_3_0 listed twice", at: offset + 13)) { try F.decodeBothWays(body) }
    }

    @Test func outOfRangeNumbersAndAnEmptyTargetAreRefusedWhereTheyAre() throws {
        // An attempt count past 65535 (2^16 as a varint: 80 80 04).
        let tooManyAttempts = "01" + Self.str("a") + "01" + "00" + "01" + "0300" + "808004" + "00" + "00" + "00" + "00" + "00" + "00" + "00"
        let (attempts, attemptsOffset) = try V.body(outbox: tooManyAttempts)
        #expect(throws: ByteReaderError.invalid("attempt count", at: attemptsOffset + 8)) { try F.decodeBothWays(attempts) }
        // An event index past 2^32 - 1 (2^32 as a varint: 80 80 80 80 10).
        let (index, indexOffset) = try V.body(outbox: "00" + "01" + "03" + "8080808010" + Self.nobody + "01")
        #expect(throws: ByteReaderError.invalid("event index", at: indexOffset + 3)) { try F.decodeBothWays(index) }
        let (empty, emptyOffset) = try V.body(outbox: "01" + "00" + Self.emptyEndpoint + "00")
        #expect(throws: ByteReaderError.invalid("delivery target", at: emptyOffset + 1)) { try F.decodeBothWays(empty) }
    }
}

/// The outbox's two changes in a `project changed` record (docs/data-format.md, change tags 22
/// and 23).
@Suite struct OutboxChangeCoding {
    static func str(_ text: String) -> String { PurchaseRecordGoldenBytes.str(text) }

    static let attempt = DeliveryAttempt(event: EventKey(cursor: 3, index: 0), attempt: 1, atMs: 10, status: 200, latencyMs: 12,
                                         error: nil)

    @Test(arguments: [
        ProjectState.Change.deliveriesSettled([
            DeliveryOutcome(target: .webhook("orders"), attempt: attempt, result: .delivered),
            DeliveryOutcome(target: .oneSignal, attempt: DeliveryAttempt(event: EventKey(cursor: .max, index: .max), attempt: .max,
                                                                          atMs: .min, status: nil, latencyMs: 30_000, error: "timed out"),
                            result: .retry(atMs: 1_700_000_300_000)),
            DeliveryOutcome(target: .webhook("a-b_c"), attempt: DeliveryAttempt(event: EventKey(cursor: 0, index: 0), attempt: 8,
                                                                                 atMs: -1, status: 500, latencyMs: 0, error: "HTTP 500 ü"),
                            result: .failed),
            DeliveryOutcome(target: .webhook("gone"), attempt: attempt, result: .gone),
        ]),
        .deliveriesSettled([]),
        .deliveriesQueued(.webhook("orders"), [EventKey(cursor: 3, index: 0), EventKey(cursor: 9, index: 70_000)]),
        .deliveriesQueued(.oneSignal, []),
    ])
    func everyOutboxChangeRoundTripsThroughARecord(_ change: ProjectState.Change) throws {
        let record = RuntimeRecord.projectChanged(7, .init([change, .profileDeleted(Version7Fixtures.profile)], atMs: 5))
        #expect(try RuntimeRecord(record.logRecord) == record)
    }

    /// Incarnation 5, at 0 ms, one change.
    static let batchStart = "05" + "00" + "01"
    /// `attempt`: evt_3_0, attempt 1, at 10 ms (zigzag 20), status 200 (zigzag 400), 12 ms
    /// (zigzag 24), no error.
    static let attemptHex = "03" + "00" + "01" + "14" + "01" + "9003" + "18" + "00"

    /// Each result is its code: delivered 0, retry 1 and the time, failed 2, gone 3.
    @Test func deliveriesSettledIsTag22WithResultCodes() throws {
        let outcomes: [DeliveryOutcome] = [
            DeliveryOutcome(target: .webhook("orders"), attempt: Self.attempt, result: .delivered),
            DeliveryOutcome(target: .oneSignal, attempt: Self.attempt, result: .retry(atMs: 5_000)),
            DeliveryOutcome(target: .webhook("orders"), attempt: Self.attempt, result: .failed),
            DeliveryOutcome(target: .webhook("orders"), attempt: Self.attempt, result: .gone),
        ]
        let golden = Self.batchStart + "16" + "04"
            + Self.str("orders") + Self.attemptHex + "00"
            + Self.str("integrations.onesignal") + Self.attemptHex + "01" + "904e"
            + Self.str("orders") + Self.attemptHex + "02"
            + Self.str("orders") + Self.attemptHex + "03"
        let record = RuntimeRecord.projectChanged(5, .init([.deliveriesSettled(outcomes)], atMs: 0))
        #expect(Hex.encode(record.logRecord.payload) == golden, "\(Hex.encode(record.logRecord.payload))")
        #expect(try RuntimeRecord(WALRecord(kind: 16, payload: try #require(Hex.decode(golden)))) == record)
    }

    @Test func deliveriesQueuedIsTag23WithTheTargetsNameAndKeys() throws {
        let record = RuntimeRecord.projectChanged(5, .init([
            .deliveriesQueued(.oneSignal, [EventKey(cursor: 3, index: 0), EventKey(cursor: 200, index: 1)]),
        ], atMs: 0))
        let golden = Self.batchStart + "17" + Self.str("integrations.onesignal") + "02" + "03" + "00" + "c801" + "01"
        #expect(Hex.encode(record.logRecord.payload) == golden, "\(Hex.encode(record.logRecord.payload))")
        #expect(try RuntimeRecord(WALRecord(kind: 16, payload: try #require(Hex.decode(golden)))) == record)
    }

    static func record(_ hex: String) throws -> WALRecord {
        WALRecord(kind: 16, payload: try #require(Hex.decode(Self.batchStart + hex)))
    }

    @Test func damagedOutboxChangesAreRefused() throws {
        let target = Self.str("orders")
        // An unknown result code, at byte 3 + 1 (tag) + 1 (count) + 7 (target) + 9 (attempt).
        #expect(throws: ByteReaderError.invalid("delivery result", at: 21)) {
            try RuntimeRecord(Self.record("16" + "01" + target + Self.attemptHex + "04"))
        }
        // A retry without its time.
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(Self.record("16" + "01" + target + Self.attemptHex + "01")) }
        // An attempt number past 65535.
        let attempts = "03" + "00" + "808004" + "14" + "01" + "9003" + "18" + "00"
        #expect(throws: ByteReaderError.invalid("attempt count", at: 14)) {
            try RuntimeRecord(Self.record("16" + "01" + target + attempts + "00"))
        }
        // An empty target; an index past 2^32 - 1.
        #expect(throws: ByteReaderError.invalid("delivery target", at: 4)) { try RuntimeRecord(Self.record("17" + "00" + "00")) }
        #expect(throws: ByteReaderError.invalid("event index", at: 13)) {
            try RuntimeRecord(Self.record("17" + target + "01" + "03" + "8080808010"))
        }
        // Trailing bytes after a queued change; a key cut short.
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(Self.record("17" + target + "00" + "00")) }
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(Self.record("17" + target + "01" + "03")) }
    }
}
