import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// A full disk stops writes before they change anything; reads go on (DESIGN.md, "Durability
/// and recovery"). The disk is a `FaultyFileSystem` that reports little free space.
@Suite struct DiskFull {
    /// A server on a disk whose free space the test sets (`reportedFreeBytes`), with a 1 MiB reserve.
    static func run(_ body: (FaultyFileSystem, TestServer) async throws -> Void) async throws {
        let disk = FaultyFileSystem()
        try await withTestServer({
            $0.fileSystem = disk
            $0.diskReserveBytes = 1 << 20
        }) { server in try await body(disk, server) }
    }

    @Test func writesAreReadOnlyAndChangeNothingReadsWorkAndWritesResumeWithSpace() async throws {
        try await Self.run { disk, server in
            let keys = try await server.createProject("acme")
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            let good = try await backend.call("config.put", ["config": ["entitlements": [["id": "before"]]]])
            #expect(good.isSuccess)

            disk.reportedFreeBytes = 1000
            let admin = try await server.admin()
            // The log notices within its check interval; poll the stats rather than sleep.
            #expect(try await Self.waitFor(admin, readOnly: true))
            let refused = try await backend.call("config.put", ["config": ["entitlements": [["id": "during"]]]])
            #expect(refused.errorCode == .readOnly)
            #expect(try await admin.call("project.create", ["project": "new"]).errorCode == .readOnly)
            #expect(try await backend.call("config.get").object("config")?["entitlements"] == [["id": "before"]])
            #expect(try await admin.call("project.list")["projects"]?.arrayValue?.count == 1)

            disk.reportedFreeBytes = nil
            #expect(try await Self.waitFor(admin, readOnly: false))
            #expect(try await backend.call("config.put", ["config": ["entitlements": [["id": "after"]]]]).isSuccess)
            #expect(try await backend.call("config.get").object("config")?["entitlements"] == [["id": "after"]])
        }
    }

    /// Polls `server.stats` until `read_only` is as expected, for at most ten seconds.
    static func waitFor(_ admin: TestClient, readOnly: Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if try await admin.call("server.stats")["read_only"] == .bool(readOnly) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}
