import GatehouseBase
import Testing

@Suite("Logger")
struct LoggerTests {
    @Test func recordsBelowTheLevelAreDroppedWithoutBuildingThem() {
        let capture = CapturingLogHandler()
        let logger = capture.logger(logLevel: .info)
        var built = false
        func expensive() -> String {
            built = true
            return "never"
        }

        logger.debug("conn.read", metadata: ["detail": "\(expensive())"])

        #expect(capture.records.isEmpty)
        #expect(!built)
    }

    @Test func recordsAtOrAboveTheLevelReachTheHandler() {
        let capture = CapturingLogHandler()
        let logger = capture.logger(logLevel: .notice)

        logger.info("below")
        logger.notice("at")
        logger.critical("above")

        #expect(capture.events == ["at", "above"])
        #expect(capture.records.map(\.level) == [.notice, .critical])
    }

    @Test func everyLevelMethodLogsAtItsOwnLevel() {
        let capture = CapturingLogHandler()
        let logger = capture.logger()

        logger.trace("e")
        logger.debug("e")
        logger.info("e")
        logger.notice("e")
        logger.warning("e")
        logger.error("e")
        logger.critical("e")

        #expect(capture.records.map(\.level) == Logger.Level.allCases)
    }

    @Test func levelsAreOrderedFromTraceToCritical() {
        let levels = Logger.Level.allCases
        #expect(levels == [.trace, .debug, .info, .notice, .warning, .error, .critical])
        #expect(levels.sorted() == levels)
        #expect(Logger.Level.warning > .info)
    }

    @Test func levelsParseFromTheirNames() {
        for level in Logger.Level.allCases {
            #expect(Logger.Level(rawValue: level.rawValue) == level)
        }
        #expect(Logger.Level(rawValue: "warning") == .warning)
        #expect(Logger.Level(rawValue: "verbose") == nil)
        #expect(Logger.Level(rawValue: "") == nil)
    }

    @Test func contextMetadataIsAttachedAndCallMetadataWinsOnAClash() {
        let capture = CapturingLogHandler()
        var logger = capture.logger()
        logger[metadataKey: "conn"] = 7
        logger[metadataKey: "project"] = "acme"

        logger.info("request.handled", metadata: ["project": "other", "op": "get"])

        #expect(capture.records.first?.metadata == ["conn": 7, "project": "other", "op": "get"])
        #expect(logger[metadataKey: "conn"] == 7)
    }

    @Test func removingAContextKeyStopsAttachingIt() {
        let capture = CapturingLogHandler()
        var logger = capture.logger()
        logger[metadataKey: "conn"] = 7
        logger[metadataKey: "conn"] = nil

        logger.info("conn.closed")

        #expect(capture.records.first?.metadata == [:])
    }

    @Test func recordsCarryLabelEventAndACurrentTimestamp() {
        let capture = CapturingLogHandler()
        let logger = capture.logger(label: "gatehouse")

        logger.info("server.listening")

        let record = capture.records.first
        #expect(record?.label == "gatehouse")
        #expect(record?.event == "server.listening")
        // After 2020-01-01 and before 2200-01-01: a wall clock, not a monotonic one.
        let seconds = record?.timestamp.components.seconds ?? 0
        #expect(seconds > 1_577_836_800 && seconds < 7_258_118_400)
    }

    @Test func metadataValuesKeepTheirKind() {
        let port = 7411
        let values: Logger.Metadata = [
            "text": "plain",
            "interpolated": "127.0.0.1:\(port)",
            "count": 42,
            "enabled": true,
            "wide": Logger.MetadataValue(UInt64.max),
            "narrow": Logger.MetadataValue(Int32(-5)),
        ]
        #expect(values["text"] == .string("plain"))
        #expect(values["interpolated"] == .string("127.0.0.1:7411"))
        #expect(values["count"] == .integer(42))
        #expect(values["enabled"] == .boolean(true))
        #expect(values["wide"] == .string("18446744073709551615"))
        #expect(values["narrow"] == .integer(-5))
    }

    @Test func theDisabledLoggerDropsEverything() {
        var built = false
        func expensive() -> String {
            built = true
            return "x"
        }
        Logger.disabled.info("\(expensive())")
        #expect(!built)
    }

    @Test func capturedRecordsCanBeFilteredAndCleared() {
        let capture = CapturingLogHandler()
        let logger = capture.logger()
        logger.info("a")
        logger.info("b")
        logger.info("a")

        #expect(capture.records(event: "a").count == 2)
        capture.removeAll()
        #expect(capture.records.isEmpty)
    }

    @Test func concurrentLoggingLosesNoRecords() async {
        let capture = CapturingLogHandler()
        let logger = capture.logger()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<250 { logger.info("tick", metadata: ["task": "\(task)", "i": "\(index)"]) }
                }
            }
        }
        #expect(capture.records.count == 2000)
    }
}
