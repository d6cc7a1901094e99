import Foundation
import GatehousePosix
import GatehouseTesting
import GatehouseWire
import Testing

/// The real binary, killed with SIGKILL at random moments under concurrent write load, loses
/// nothing it acknowledged (DESIGN.md, "Reliability and security"). Ten rounds here;
/// `GATEHOUSE_SOAK=1` runs a hundred.
@Suite struct CrashRecovery {
    static let rounds = ProcessInfo.processInfo.environment["GATEHOUSE_SOAK"] == nil ? 10 : 100
    static let configWriters = 3

    @Test func sigkillUnderWriteLoadLosesNoAcknowledgedWrite() async throws {
        try await withTemporaryDirectory { directory in
            let dataDirectory = directory.appending("data")
            var random = SplitMix(seed: 0x6A7E_4005E)
            var model = Acknowledged(configWriters: Self.configWriters)
            for round in 0..<Self.rounds {
                let server = try await ServerProcess.start(dataDirectory: dataDirectory)
                if round == 0 {
                    let admin = try await server.admin()
                    for index in 0..<Self.configWriters {
                        let created = try await admin.call("project.create", ["project": .string("p\(index)")])
                        model.secrets.append(try #require(created.object("keys")?.string("secret")))
                    }
                }
                try await Self.check(server, model)
                // Kill after a random number of acknowledged writes (a random moment of the load).
                let target = model.total + Int(random.next() % 120) + 1
                let progress = WriteProgress(model)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<Self.configWriters {
                        group.addTask { await Self.putConfigs(server, writer: index, progress: progress) }
                    }
                    group.addTask { await Self.createProjects(server, progress: progress) }
                    group.addTask {
                        while await progress.model.total < target { await Task.yield() }
                        _ = await server.kill9()
                    }
                    try await group.waitForAll()
                }
                model = await progress.model
            }
            let server = try await ServerProcess.start(dataDirectory: dataDirectory)
            try await Self.check(server, model)
            #expect(await server.stop().status == 0)
        }
    }

    /// Puts configs numbered 1, 2, 3… on one project until the connection dies.
    static func putConfigs(_ server: ServerProcess, writer: Int, progress: WriteProgress) async {
        guard let client = try? TestClient(connectingTo: server.address),
            (try? await client.hello(await progress.model.secrets[writer])) != nil
        else { return }
        var next = await progress.model.configs[writer] + 1
        while let answer = try? await client.call("config.put", ["config": ["entitlements": [["id": .string("v\(next)")]]]]),
            answer.isSuccess
        {
            await progress.acknowledgeConfig(writer, next)
            next += 1
        }
    }

    /// Creates projects c1, c2, c3… until the connection dies.
    static func createProjects(_ server: ServerProcess, progress: WriteProgress) async {
        guard let admin = try? await server.admin() else { return }
        var next = await progress.model.created + 1
        while let answer = try? await admin.call("project.create", ["project": .string("c\(next)")]), answer.isSuccess {
            await progress.acknowledgeCreate(next)
            next += 1
        }
    }

    /// Every acknowledged write is there; at most the one in flight beyond it.
    /// An install id, the install id of a profile merged into another and an attribute's time,
    /// once acknowledged, outlive SIGKILL: from the log, and from a snapshot with the log after it.
    @Test func installIDsAndAttributeTimesOutliveSIGKILL() async throws {
        try await withTemporaryDirectory { directory in
            let dataDirectory = directory.appending("data")
            let own = "$RCAnonymousID:0123456789abcdef0123456789abcdef"
            let merged = "$RCAnonymousID:fedcba9876543210fedcba9876543210"
            var server = try await ServerProcess.start(dataDirectory: dataDirectory)
            let created = try await server.admin().call("project.create", ["project": "shop"])
            let secret = try #require(created.object("keys")?.string("secret"))
            var backend = try TestClient(connectingTo: server.address)
            try await backend.hello(secret)
            let alice = try #require(try await backend.call("profile.create", [
                "customer_user_id": "alice", "install_id": .string(own),
            ]).object("profile")?.string("profile_id"))
            #expect(try await backend.call("profile.create", ["install_id": .string(merged)]).isSuccess)
            #expect(try await backend.call("profile.attributes", [
                "profile_id": .string(merged), "attributes": ["plan": ["value": "gold", "updated_at_ms": 5_000]],
            ]).isSuccess)
            #expect(try await backend.call("profile.identify", ["profile_id": .string(merged), "customer_user_id": "alice"]).isSuccess)
            for checkpoint in [false, true] {
                if checkpoint { #expect(try await server.admin().call("server.checkpoint").isSuccess) }
                _ = await server.kill9()
                server = try await ServerProcess.start(dataDirectory: dataDirectory)
                backend = try TestClient(connectingTo: server.address)
                try await backend.hello(secret)
                for install in [own, merged] {
                    let document = try await backend.call("profile.get", ["profile_id": .string(install)])
                    #expect(document.object("profile")?.string("profile_id") == alice, "\(install), checkpoint \(checkpoint)")
                }
                // The attribute kept its time: older loses.
                let older = try await backend.call("profile.attributes", [
                    "profile_id": .string(own), "attributes": ["plan": ["value": "older", "updated_at_ms": 4_999]],
                ])
                #expect(older["attributes"] == ["plan": "gold"], "checkpoint \(checkpoint)")
            }
            #expect(await server.stop().status == 0)
        }
    }

    static func check(_ server: ServerProcess, _ model: Acknowledged) async throws {
        for (index, key) in model.secrets.enumerated() {
            let client = try TestClient(connectingTo: server.address)
            try await client.hello(key)
            let entitlements = try await client.call("config.get").object("config")?["entitlements"]?.arrayValue ?? []
            let id = entitlements.first?.objectValue?.string("id")
            let number = id.flatMap { Int($0.dropFirst()) } ?? 0
            #expect(number == model.configs[index] || number == model.configs[index] + 1,
                    "project p\(index): acknowledged v\(model.configs[index]), recovered \(id ?? "nothing")")
        }
        let admin = try await server.admin()
        let ids = Set((try await admin.call("project.list")["projects"]?.arrayValue ?? []).compactMap { $0.objectValue?.string("id") })
        for number in 1..<(model.created + 1) {
            #expect(ids.contains("c\(number)"), "acknowledged project c\(number) is missing")
        }
        #expect(!ids.contains("c\(model.created + 2)"), "a project that was never sent exists")
    }
}

/// What the crash test knows was acknowledged.
struct Acknowledged: Sendable {
    var secrets: [String] = []
    var configs: [Int]
    var created = 0

    init(configWriters: Int) {
        configs = [Int](repeating: 0, count: configWriters)
    }

    var total: Int { configs.reduce(0, +) + created }
}

actor WriteProgress {
    private(set) var model: Acknowledged
    init(_ model: Acknowledged) { self.model = model }
    func acknowledgeConfig(_ writer: Int, _ number: Int) { model.configs[writer] = number }
    func acknowledgeCreate(_ number: Int) { model.created = number }
}

/// A small seeded generator, so a failing round can be replayed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A damaged log: a torn tail is cut and reported; damage elsewhere refuses to start until the
/// operator repairs it (DESIGN.md, "Durability and recovery").
@Suite struct DamagedLog {
    /// Starts a server, creates `count` projects one by one (one frame each), stops it (cleanly,
    /// or with SIGKILL so the last segment is left open as after a crash), and answers the path
    /// of the one log segment.
    static func populatedLog(_ dataDirectory: String, count: Int, crash: Bool = false) async throws -> String {
        let server = try await ServerProcess.start(dataDirectory: dataDirectory)
        let admin = try await server.admin()
        for index in 0..<count {
            #expect(try await admin.call("project.create", ["project": .string("p\(index)")]).isSuccess)
        }
        if crash {
            _ = await server.kill9()
        } else {
            #expect(await server.stop().status == 0)
        }
        let segments = try FileManager.default.contentsOfDirectory(atPath: dataDirectory + "/wal").filter { $0.hasSuffix(".wal") }
        try #require(segments.count == 1, "\(segments)")
        return dataDirectory + "/wal/" + segments[0]
    }

    /// The offset just past the last frame, walking the frames as docs/data-format.md lays
    /// them out: from 4096, each a 48-byte header (marker `WALF`, body length at +8) and a body
    /// padded to 8 bytes.
    static func dataEnd(of bytes: Data) -> Int {
        var offset = 4096
        while offset + 48 <= bytes.count, bytes[offset..<offset + 4].elementsEqual(Array("WALF".utf8)) {
            let length = bytes[offset + 8..<offset + 12].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            offset += 48 + (length + 7) / 8 * 8
        }
        return offset
    }

    @Test func tornTailIsCutKeptAsideAndReportedAndEverythingAcknowledgedIsThere() async throws {
        try await withTemporaryDirectory { directory in
            let dataDirectory = directory.appending("data")
            let segment = try await Self.populatedLog(dataDirectory, count: 5, crash: true)
            // A crash mid-write: the start of a frame, then nothing.
            var bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
            let end = Self.dataEnd(of: bytes)
            let torn: [UInt8] = [0x57, 0x41, 0x4C, 0x46, 0x13, 0x37, 0x00, 0x42, 0x99, 0x01, 0x02, 0x03]
            bytes.replaceSubrange(end..<end + torn.count, with: torn)
            try await TestFiles.write(bytes, to: segment)

            let server = try await ServerProcess.start(dataDirectory: dataDirectory)
            let admin = try await server.admin()
            let projects = try await admin.call("project.list")["projects"]?.arrayValue ?? []
            #expect(projects.count == 5)
            let result = await server.stop()
            #expect(result.errors.contains("torn"), "the start is logged with what was dropped")
            let kept = try FileManager.default.contentsOfDirectory(atPath: dataDirectory + "/wal").filter { $0.contains(".broken-") }
            #expect(kept.count == 1)
        }
    }

    @Test func damageInTheMiddleRefusesToStartAndRepairMakesItStart() async throws {
        try await withTemporaryDirectory { directory in
            let dataDirectory = directory.appending("data")
            let segment = try await Self.populatedLog(dataDirectory, count: 8)
            // Flip one byte inside the first frame's body; seven good frames follow it.
            var bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
            bytes[4096 + 48 + 4] ^= 0xFF
            try await TestFiles.write(bytes, to: segment)

            let refused = try await GatehouseProcess.start(["serve", "--data-dir=\(dataDirectory)", "--listen=127.0.0.1:0", "--http=127.0.0.1:0",
                                                "--admin-key=\(TestServer.adminKey)"])
            let result = await refused.finish()
            #expect(result.status == 3)
            let name = (segment as NSString).lastPathComponent
            #expect(result.errors.contains(name), "the message names the file: \(result.errors)")
            #expect(result.errors.contains("offset"), "the message names the offset: \(result.errors)")
            #expect(result.errors.contains("gatehouse wal"), "the message says what to do: \(result.errors)")

            let verify = try await GatehouseProcess.start(["wal", "verify", "--data-dir=\(dataDirectory)"]).finish()
            #expect(verify.status == 1)
            #expect(verify.output.contains(name))

            let repair = try await GatehouseProcess.start(["wal", "repair", "--data-dir=\(dataDirectory)"]).finish()
            #expect(repair.status == 0, "\(repair.errors)")
            let backups = try FileManager.default.contentsOfDirectory(atPath: dataDirectory + "/wal").filter { $0.hasPrefix("repair-") }
            #expect(backups.count == 1, "repair keeps a copy of what it cuts")

            let server = try await ServerProcess.start(dataDirectory: dataDirectory)
            let admin = try await server.admin()
            #expect(try await admin.call("project.list").isSuccess)
            let stopped = await server.stop()
            #expect(stopped.status == 0, "\(stopped.errors)")
            #expect(try await GatehouseProcess.start(["wal", "verify", "--data-dir=\(dataDirectory)"]).finish().status == 0)
        }
    }

    @Test func dumpListsFramesAndRecords() async throws {
        try await withTemporaryDirectory { directory in
            let dataDirectory = directory.appending("data")
            _ = try await Self.populatedLog(dataDirectory, count: 3)
            let dump = try await GatehouseProcess.start(["wal", "dump", "--data-dir=\(dataDirectory)"]).finish()
            #expect(dump.status == 0)
            #expect(dump.output.split(separator: "\n").count >= 6, "\(dump.output)")
            let verify = try await GatehouseProcess.start(["wal", "verify", "--data-dir=\(dataDirectory)"]).finish()
            #expect(verify.status == 0, "\(verify.output)")
        }
    }
}

/// Moving a tenant with the CLI, including from a stopped server.
@Suite struct TenantCommandLine {
    @Test func exportFromAStoppedServerAndRestoreOnAnother() async throws {
        try await withTemporaryDirectory { directory in
            let source = directory.appending("source")
            let server = try await ServerProcess.start(dataDirectory: source)
            let admin = try await server.admin()
            let created = try await admin.call("project.create", ["project": "shop"])
            let secret = try #require(created.object("keys")?.string("secret"))
            let backend = try TestClient(connectingTo: server.address)
            try await backend.hello(secret)
            #expect(try await backend.call("config.put", ["config": ["entitlements": [["id": "pro"]]]]).isSuccess)

            let whileRunning = try await GatehouseProcess.start(["tenant", "export", "shop", "--data-dir=\(source)"]).finish()
            #expect(whileRunning.status == 1, "a running server holds the data directory")
            #expect(whileRunning.errors.contains("in use"))
            #expect(await server.stop().status == 0)

            // A stopped server's tenant goes wherever the operator says: export runs as them, with no server.
            let file = directory.appending("shop.snap")
            let export = try await GatehouseProcess.start(["tenant", "export", "shop", "--data-dir=\(source)", "--out=\(file)"]).finish()
            #expect(export.status == 0, "\(export.errors)")
            #expect(export.output.contains(#""path":"\#(file)""#))

            // A running server reads and writes only names inside its exports directory.
            let incoming = directory.appending("incoming")
            let target = try await ServerProcess.start(dataDirectory: directory.appending("target"), extraArguments: ["--exports-dir=\(incoming)"])
            let common = ["--connect=\(target.address)", "--key=\(TestServer.adminKey)"]
            let outside = try await GatehouseProcess.start(["tenant", "restore", "shop", "--from=\(file)"] + common).finish()
            #expect(outside.status == 1)
            #expect(outside.errors.contains("bad_request"), "\(outside.errors)")
            try await TestFiles.copy(file, to: incoming + "/shop.snap")
            let restore = try await GatehouseProcess.start(["tenant", "restore", "shop", "--from=shop.snap"] + common).finish()
            #expect(restore.status == 0, "\(restore.errors)")
            let moved = try TestClient(connectingTo: target.address)
            try await moved.hello(secret)
            #expect(try await moved.call("config.get").object("config")?["entitlements"] == [["id": "pro"]])
            let snapshot = try await GatehouseProcess.start(["tenant", "snapshot", "shop", "--out=again.snap"] + common).finish()
            #expect(snapshot.status == 0)
            #expect(snapshot.output.contains(#""path":"\#(incoming)/again.snap""#), "\(snapshot.output)")
            #expect(FileManager.default.fileExists(atPath: incoming + "/again.snap"))
            #expect(await target.stop().status == 0)
        }
    }
}
