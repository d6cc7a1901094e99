import GatehouseBase
@testable import GatehouseStorage
import GatehouseTesting
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Crashes on the simulated disk (storage.md Part D, items 3 and 4): whatever a crash keeps of
/// the unsynced writes, recovery yields a prefix of what was appended that holds every record
/// acknowledged as durable. Seeded: a failure names its seed. GATEHOUSE_SOAK=1 runs many more.
@Suite struct CrashRecovery {
    /// What appenders did: the record at each LSN, and which LSNs were acknowledged.
    final class Oracle: Sendable {
        let appended = Mutex<[LSN: WALRecord]>([:])
        let acknowledged = Mutex<Set<LSN>>([])
        let stop = Atomic<Bool>(false)
        let running = Atomic<Int>(0)

        var maxAcknowledged: LSN { acknowledged.withLock { $0.max() ?? 0 } }
        var ackCount: Int { acknowledged.withLock { $0.count } }

        /// Checks a replay against the oracle: LSNs 1...n in order, the records that were
        /// appended there, and n at least the highest acknowledged LSN.
        func check(_ opened: OpenedLog, seed: UInt64, sourceLocation: SourceLocation = #_sourceLocation) {
            let lsns = opened.replayedLSNs
            #expect(lsns == Array(LSN(1)...LSN(max(lsns.count, 1))).prefix(lsns.count).map { $0 }, "seed \(seed): not a prefix", sourceLocation: sourceLocation)
            let appended = self.appended.withLock { $0 }
            for (lsn, record) in opened.replayed where appended[lsn] != record {
                Issue.record("seed \(seed): LSN \(lsn) replayed a record that was not appended there", sourceLocation: sourceLocation)
                break
            }
            #expect(LSN(lsns.count) >= maxAcknowledged, "seed \(seed): lost acknowledged records (have \(lsns.count), acked up to \(maxAcknowledged))", sourceLocation: sourceLocation)
        }
    }

    static func startAppenders(_ log: WriteAheadLog, oracle: Oracle, threads: Int, seed: UInt64) {
        for thread in 0..<threads {
            oracle.running.add(1, ordering: .relaxed)
            OSThread.detached(named: "appender") {
                let random = SeededRandomSource(seed: seed &* 1000 &+ UInt64(thread))
                var counter: UInt32 = 0
                while !oracle.stop.load(ordering: .relaxed) {
                    let count = Int(random.randomUInt64() % 3) + 1
                    let records = (0..<count).map { _ in
                        counter += 1
                        let size = Int(random.randomUInt64() % 1500)
                        return WALRecord(kind: UInt16(thread), payload: withUnsafeBytes(of: counter) { Array($0) } + random.randomBytes(count: size))
                    }
                    let last: LSN
                    do {
                        last = try log.append(records)
                    } catch let error as StorageError where error.code == .busy {
                        usleep(200)
                        continue
                    } catch {
                        break
                    }
                    let first = last - LSN(records.count) + 1
                    oracle.appended.withLock { map in
                        for (index, record) in records.enumerated() { map[first + LSN(index)] = record }
                    }
                    log.whenDurable(last) { oracle.acknowledged.withLock { $0.formUnion(first...last) } }
                }
                oracle.running.subtract(1, ordering: .relaxed)
            }
        }
    }

    @Test(arguments: [DurabilityPolicy.always])
    func afterACrashAtARandomMomentTheLogIsAPrefixHoldingEveryAcknowledgedRecord(policy: DurabilityPolicy) async throws {
        let runs: UInt64 = soak ? 300 : 10
        for seed in 0..<runs {
            let disk = FaultyFileSystem()
            var options = testOptions(policy, seed: seed)
            // Half the runs with bigger segments, so more of the syncs are frame syncs than rotations.
            if seed % 4 >= 2 { options.segmentBytes = 1 << 20 }
            options.pendingBytesMax = 256 << 10
            let opened = try openLog(disk, options)
            let oracle = Oracle()
            Self.startAppenders(opened.log, oracle: oracle, threads: 3, seed: seed)
            // Odd seeds crash at a sync (so a frame written but not yet synced is torn at a
            // random sector); even seeds at whatever moment the acknowledgements reach a target.
            let survivor: FaultyFileSystem
            if seed % 2 == 1 {
                disk.crash(atSync: 3 + Int(seed * 37 % 150), seed: seed)
                _ = await eventually { disk.isDead }
                survivor = try #require(disk.crashedDisk)
            } else {
                _ = await eventually { oracle.ackCount >= 20 + Int(seed * 37 % 300) }
                survivor = disk.crash(seed: seed)
            }
            oracle.stop.store(true, ordering: .relaxed)
            _ = await eventually { oracle.running.load(ordering: .relaxed) == 0 }
            await opened.log.close()

            let recovered = try openLog(survivor, options)
            oracle.check(recovered, seed: seed)
            if getenv("GATEHOUSE_DEBUG") != nil { print("seed \(seed) acked \(oracle.maxAcknowledged) appended \(oracle.appended.withLock { $0.count }) recovered \(recovered.replayed.count) torn \(recovered.report.tornTail.map { "\($0.bytes)B \($0.reason)" } ?? "-")") }
            // Recovery is idempotent: another start sees the same records and cuts nothing.
            await recovered.log.close()
            let again = try openLog(survivor, options)
            #expect(again.replayedLSNs == recovered.replayedLSNs, "seed \(seed)")
            #expect(again.report.tornTail == nil, "seed \(seed)")
            await again.log.close()
        }
    }

    @Test func aCrashAtEverySyncPointLeavesEveryAcknowledgedRecord() async throws {
        var k = 1
        var finished = false
        while !finished {
            let disk = FaultyFileSystem()
            disk.crash(atSync: k, seed: UInt64(k))
            let oracle = Oracle()
            do {
                let opened = try openLog(disk, testOptions(seed: UInt64(k)))
                for lsn in LSN(1)...40 {
                    let record = testRecord(lsn, size: 2500)
                    guard let appended = try? opened.log.append(record) else { break }
                    oracle.appended.withLock { $0[appended] = record }
                    guard await waitOrFail(opened.log, appended) else { break }
                    oracle.acknowledged.withLock { _ = $0.insert(appended) }
                }
                await opened.log.close()
            } catch {
                // The crash hit while opening the brand-new log.
            }
            guard let survivor = disk.crashedDisk else {
                finished = true
                #expect(oracle.ackCount == 40)
                break
            }
            let recovered = try openLog(survivor, testOptions(seed: 1000 + UInt64(k)))
            oracle.check(recovered, seed: UInt64(k))
            await recovered.log.close()
            k += 1
        }
        #expect(k > 40, "the workload has a sync point per record at least")
    }

    @Test(arguments: [DurabilityPolicy.everysec, .none])
    func aProcessCrashLosesNothingAcknowledged(policy: DurabilityPolicy) async throws {
        for seed in UInt64(0)..<(soak ? 100 : 4) {
            let disk = FaultyFileSystem()
            let opened = try openLog(disk, testOptions(policy, seed: seed))
            let oracle = Oracle()
            Self.startAppenders(opened.log, oracle: oracle, threads: 2, seed: seed)
            _ = await eventually { oracle.ackCount >= 100 + Int(seed) * 50 }
            let survivor = disk.crash(seed: seed, .processCrash)
            oracle.stop.store(true, ordering: .relaxed)
            _ = await eventually { oracle.running.load(ordering: .relaxed) == 0 }
            await opened.log.close()
            let recovered = try openLog(survivor, testOptions(policy))
            oracle.check(recovered, seed: seed)
            await recovered.log.close()
        }
    }

    @Test func aCrashDuringRecoveryLeadsToTheSameResultNextTime() async throws {
        for seed in UInt64(0)..<(soak ? 100 : 6) {
            // A log with a torn tail for recovery to cut.
            let disk = FaultyFileSystem()
            let opened = try openLog(disk, testOptions(seed: seed))
            let oracle = Oracle()
            Self.startAppenders(opened.log, oracle: oracle, threads: 2, seed: seed)
            _ = await eventually { oracle.ackCount >= 60 }
            let crashed = disk.crash(seed: seed)
            oracle.stop.store(true, ordering: .relaxed)
            _ = await eventually { oracle.running.load(ordering: .relaxed) == 0 }
            await opened.log.close()
            let reference = try openLog(crashed.crash(seed: 0, .processCrash), testOptions())
            let expected = reference.replayedLSNs
            await reference.log.close()
            // Crash at each sync of recovery in turn; the next start must agree.
            for syncPoint in 1...4 {
                let copy = crashed.crash(seed: 0, .processCrash)
                copy.crash(atSync: syncPoint, seed: seed &+ UInt64(syncPoint))
                if let interrupted = try? openLog(copy, testOptions()) { await interrupted.log.close() }
                let image = copy.crashedDisk ?? copy.crash(seed: 0, .processCrash)
                let recovered = try openLog(image, testOptions())
                #expect(recovered.replayedLSNs == expected, "seed \(seed), crash at recovery sync \(syncPoint)")
                oracle.check(recovered, seed: seed)
                await recovered.log.close()
            }
        }
    }

    private func waitOrFail(_ log: WriteAheadLog, _ lsn: LSN) async -> Bool {
        do {
            try await log.waitDurableOrFailure(lsn)
            return true
        } catch {
            return false
        }
    }
}
