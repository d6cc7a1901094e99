import GatehousePosix
import GatehouseWire
#if canImport(Glibc)
import Glibc
#endif

/// Removes what an op created (``BenchLeftovers``) from a server that outlives the run. Best
/// effort, like deleting the bench project: a failure is a warning, never a failed measurement.
enum BenchCleanup {
    /// Deletes per batch: one write, then the answers.
    private static let batch = 256

    static func removeLeftovers(of op: BenchOp, project: BenchProject, loadSessions: [BenchSession], on target: BenchTarget) {
        switch op.leftovers {
        case .nothing:
            return
        case .createdProjects:
            // Requests still in flight may create projects after a list taken now.
            drain(loadSessions)
            let prefix = project.id + BenchOp.createdProjectInfix
            do {
                let deleted = try deleteProjects(prefixed: prefix, on: target)
                printError("\(op.name): deleted the \(deleted) projects \(prefix)<n> the run created")
            } catch {
                printError("warning: could not delete the projects \(prefix)<n> the run created: \(error)")
            }
        }
    }

    /// Waits until the server has answered everything the load connections sent: a `ping` is
    /// answered only after every request before it on its connection (answers keep request
    /// order), so its answer is a barrier. The load loops have stopped; their sockets are
    /// made blocking again (with the session's read timeout) for this.
    private static func drain(_ sessions: [BenchSession]) {
        let marker = "bench-drain"
        for session in sessions {
            let descriptor = session.client.socket.descriptor
            let flags = fcntl(descriptor, F_GETFL)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
            do {
                try session.client.send(#"{"id":"\#(marker)","op":"ping"}"#)
                // Skips the answers still on their way (and a line the load loop read half of).
                while let line = try session.client.readLine() {
                    if line.hasPrefix(#"{"id":"\#(marker)""#) { break }
                }
            } catch {
                printError("warning: a load connection did not drain (\(error)); cleanup may miss a project")
            }
        }
    }

    /// Deletes every project whose id starts with `prefix`; answers how many were deleted.
    private static func deleteProjects(prefixed prefix: String, on target: BenchTarget) throws(BenchFailure) -> Int {
        let admin = try BenchSession(connectingTo: target.address)
        defer { admin.close() }
        try admin.hello(target.adminKey)
        let listed = try admin.call(["op": "project.list"])
        let ids = (listed["projects"]?.arrayValue ?? []).compactMap { project -> String? in
            guard let id = project.objectValue?["id"]?.stringValue, id.hasPrefix(prefix) else { return nil }
            return id
        }
        var deleted = 0
        var start = 0
        while start < ids.count {
            let end = min(start + batch, ids.count)
            let requests: [JSONObject] = ids[start..<end].map { ["op": "project.delete", "project": .string($0)] }
            let answers = try admin.pipelined(requests)
            deleted += answers.filter { $0.contains(#""ok":true"#) }.count
            start = end
        }
        return deleted
    }
}
