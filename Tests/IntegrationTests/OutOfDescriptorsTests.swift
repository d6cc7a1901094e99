import Foundation
import GatehousePosix
import GatehouseTesting
import GatehouseWire
import Testing

/// A server out of file descriptors (`EMFILE`) must not spin on the connections it cannot
/// accept: it pauses accepting, says so at most once a second, and accepts again once
/// descriptors are free. The real binary, under a low `RLIMIT_NOFILE`.
@Suite struct OutOfDescriptors {
    /// User and system CPU time the process has used, in seconds (`/proc/<pid>/stat`).
    static func cpuSeconds(of pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return 0 }
        let fields = text[text.index(after: end)...].split(separator: " ")
        // After the command: state is field 3, utime 14 and stime 15 (1-based, as proc(5) counts).
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func accepted(_ admin: TestClient) async throws -> Int64 {
        try await admin.call("server.stats").object("connections")?.int("accepted") ?? -1
    }

    @Test func acceptPausesWhileDescriptorsRunOutAndResumesOnceTheyAreFree() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await ServerProcess.start(dataDirectory: directory.appending("data"), descriptorLimit: 48)
            let admin = try await server.admin()
            let began = ContinuousClock.now
            // More connections than descriptors: those the server cannot take wait in the kernel's queue.
            var clients: [TestClient] = []
            for _ in 0..<80 { clients.append(try TestClient(connectingTo: server.address, timeoutMilliseconds: 30_000)) }
            // Until the server stops taking them (a few polls in a row with nothing new).
            var last: Int64 = -1
            var steady = 0
            while steady < 5 {
                let now = try await Self.accepted(admin)
                steady = now == last ? steady + 1 : 0
                last = now
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(last < 81, "the server is out of descriptors: \(last) accepted")
            // Out of descriptors for two seconds: a server that spins burns them on the CPU.
            let cpuBefore = Self.cpuSeconds(of: server.process.pid)
            try await Task.sleep(for: .seconds(2))
            let cpu = Self.cpuSeconds(of: server.process.pid) - cpuBefore
            #expect(cpu < 1.0, "\(cpu) s of CPU in 2 s out of descriptors")

            // Descriptors come free: the queued connections are taken, and a new one is served. The
            // clients it took (`last`, less the admin's) come free, and so many of those still
            // queued close that half as many stay open ahead of the new one: more descriptors come
            // free than connections queue ahead of it, however many the server's own threads,
            // listeners and files hold (which decides how many it could take).
            let open = max(1, Int(last - 1) / 2)
            let closing = clients.count - open
            for client in clients.prefix(closing) { await client.close() }
            let fresh = try TestClient(connectingTo: server.address, timeoutMilliseconds: 30_000)
            try await fresh.hello(TestServer.adminKey)
            #expect(try await fresh.call("ping").isSuccess)
            #expect(try await Self.accepted(admin) > last)

            let stopped = await server.stop()
            let seconds = (ContinuousClock.now - began).components.seconds
            let lines = stopped.errors.split(separator: "\n").filter { $0.contains(#""event":"server.accept_"#) }
            #expect(!lines.isEmpty, "the pause is logged")
            #expect(lines.count <= Int(seconds) + 2, "at most a line a second: \(lines.count) in \(seconds) s")
            #expect(lines.allSatisfy { $0.contains("server.accept_paused") && $0.contains("Too many open files") })
            for client in clients.dropFirst(closing) { await client.close() }
        }
    }
}
