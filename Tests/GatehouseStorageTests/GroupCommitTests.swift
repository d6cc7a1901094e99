import GatehouseBase
@testable import GatehouseStorage
import GatehouseTesting
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Group commit (storage.md C.4): appenders on many threads share frames and syncs, and every
/// acknowledgement fires exactly once, only after its record is durable, in LSN order.
@Suite struct GroupCommit {
    final class Acks: Sendable {
        let fired = Mutex<[LSN]>([])
        let durableAtFire = Mutex<[LSN: LSN]>([:])
    }

    @Test func concurrentAppendersShareFramesAndEveryAckFiresOnceInOrder() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        let log = opened.log
        let threads = 8
        let perThread = 400
        let acks = Acks()
        let perThreadLSNs = Mutex<[[LSN]]>(Array(repeating: [], count: threads))
        let done = Mutex(0)
        for thread in 0..<threads {
            OSThread.detached(named: "appender") {
                for index in 0..<perThread {
                    let record = WALRecord(kind: UInt16(thread), payload: [UInt8(thread), UInt8(truncatingIfNeeded: index)])
                    guard let lsn = try? log.append(record) else { Issue.record("append failed"); continue }
                    perThreadLSNs.withLock { $0[thread].append(lsn) }
                    log.whenDurable(lsn) {
                        acks.fired.withLock { $0.append(lsn) }
                        acks.durableAtFire.withLock { $0[lsn] = log.durableLSN }
                    }
                }
                done.withLock { $0 += 1 }
            }
        }
        #expect(await eventually { done.withLock { $0 } == threads })
        let total = LSN(threads * perThread)
        #expect(await eventually { acks.fired.withLock { $0.count } == Int(total) })
        let fired = acks.fired.withLock { $0 }
        #expect(Set(fired) == Set(1...total), "every ack fires exactly once")
        #expect(fired.count == Int(total))
        for (lsn, durable) in acks.durableAtFire.withLock({ $0 }) where durable < lsn {
            Issue.record("LSN \(lsn) acknowledged while only \(durable) was durable")
        }
        // Per appender, acknowledgements come in the order of its appends.
        let position = Dictionary(uniqueKeysWithValues: fired.enumerated().map { ($1, $0) })
        for lsns in perThreadLSNs.withLock({ $0 }) {
            #expect(lsns == lsns.sorted())
            #expect(lsns.map { position[$0]! } == lsns.map { position[$0]! }.sorted())
        }
        let stats = log.stats
        #expect(stats.recordsWritten == Int(total))
        #expect(stats.framesWritten < Int(total), "group commit puts several records in a frame")
        #expect(stats.syncs == stats.framesWritten)
        await log.close()
        let reopened = try openLog(disk)
        #expect(reopened.replayedLSNs == Array(1...total))
        await reopened.log.close()
    }

    @Test func recordsQueuedWhileASyncRunsGoOutTogetherInTheNextFrame() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        let log = opened.log
        disk.holdSyncs()
        _ = try log.append(testRecord(1))
        #expect(await eventually { disk.syncsWaiting == 1 })
        let acks = Acks()
        for lsn in LSN(2)...100 {
            #expect(try log.append(testRecord(lsn)) == lsn)
        }
        // Registered in reverse, before any of them is durable: they still fire in LSN order.
        for lsn in (LSN(1)...100).reversed() {
            log.whenDurable(lsn) { acks.fired.withLock { $0.append(lsn) } }
        }
        #expect(acks.fired.withLock { $0.isEmpty }, "nothing is acknowledged before its sync returns")
        disk.releaseSyncs()
        #expect(await eventually { acks.fired.withLock { $0.count } == 100 })
        #expect(acks.fired.withLock { $0 } == Array(1...100))
        #expect(log.stats.framesWritten == 2, "one frame for LSN 1, one for everything queued behind its sync")
        await log.close()
    }

    @Test func whenDurableForADurableLSNRunsAtOnceOnTheCallersThread() async throws {
        let opened = try openLog(FaultyFileSystem())
        let lsn = try opened.log.append(testRecord(1))
        await opened.log.waitDurable(lsn)
        let caller = pthread_self()
        let ranHere = Mutex(false)
        opened.log.whenDurable(lsn) { ranHere.withLock { $0 = pthread_equal(pthread_self(), caller) != 0 } }
        #expect(ranHere.withLock { $0 })
        await opened.log.close()
    }

    @Test func appendsBeyondThePendingBoundAreRefusedAsBusy() async throws {
        let disk = FaultyFileSystem()
        var options = testOptions()
        options.pendingBytesMax = 2000
        let opened = try openLog(disk, options)
        disk.holdSyncs()
        _ = try opened.log.append(testRecord(1, size: 100))
        #expect(await eventually { disk.syncsWaiting == 1 })
        var busy: StorageError?
        for lsn in LSN(2)...100 {
            do {
                _ = try opened.log.append(testRecord(lsn, size: 100))
            } catch {
                busy = error
                break
            }
        }
        #expect(busy?.code == .busy)
        let queued = opened.log.lastLSN
        disk.releaseSyncs()
        await opened.log.waitDurable(queued)
        #expect(try opened.log.append(testRecord(queued + 1, size: 100)) == queued + 1)
        await opened.log.close()
    }
}
