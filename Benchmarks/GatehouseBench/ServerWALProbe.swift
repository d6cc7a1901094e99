import GatehouseWire

/// Reads the server's log counters (`server.stats` → `wal`) as a load's measured window opens
/// and closes, over an admin connection of its own (`server.stats` is answered inline, so it
/// does not queue behind the load). Used on the load's coordinating thread only.
final class ServerWALProbe: LoadProbe, @unchecked Sendable {
    struct Counters: Sendable {
        let syncs: Int
        let frames: Int
        let lastLSN: Int
    }

    private let session: BenchSession
    private(set) var opened: Counters?
    private(set) var closed: Counters?
    private(set) var failure: BenchFailure?

    init(target: BenchTarget) throws(BenchFailure) {
        session = try BenchSession(connectingTo: target.address)
        do {
            try session.hello(target.adminKey)
        } catch {
            session.close()
            throw error
        }
    }

    deinit {
        session.close()
    }

    func windowOpened() {
        opened = read()
    }

    func windowClosed() {
        closed = read()
    }

    /// The change over the window, or why there is none.
    func delta() throws(BenchFailure) -> Counters {
        if let failure { throw failure }
        guard let opened, let closed else { throw BenchFailure("server.stats was not read around the window") }
        return Counters(syncs: closed.syncs - opened.syncs, frames: closed.frames - opened.frames,
                        lastLSN: closed.lastLSN - opened.lastLSN)
    }

    private func read() -> Counters? {
        do throws(BenchFailure) {
            let stats = try session.call(["op": "server.stats"])
            let wal = stats["wal"]?.objectValue ?? [:]
            func integer(_ name: String) -> Int? { wal[name]?.numberValue.flatMap { Int($0.text) } }
            guard let syncs = integer("syncs"), let frames = integer("frames"), let lastLSN = integer("last_lsn") else {
                throw BenchFailure("server.stats has no wal.syncs, wal.frames or wal.last_lsn: \(JSONWriter.string(.object(stats)))")
            }
            return Counters(syncs: syncs, frames: frames, lastLSN: lastLSN)
        } catch {
            if failure == nil { failure = error }
            return nil
        }
    }
}
