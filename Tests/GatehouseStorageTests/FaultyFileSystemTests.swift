import GatehouseBase
import GatehouseStorage
import GatehouseTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The simulated disk lies the way real ones may, and only that way: what was synced survives,
/// what was not may not.
@Suite struct SimulatedDisk {
    func freshFile(_ disk: FaultyFileSystem) throws -> OpenFile {
        try disk.makeDirectoriesDurably("/d")
        let file = try disk.open("/d/f", .createNew)
        try disk.syncDirectory("/d")
        return file
    }

    @Test func syncedBytesSurviveACrashAndUnsyncedOnesMayNot() throws {
        let disk = FaultyFileSystem()
        let file = try freshFile(disk)
        try disk.writeAll(file, at: 0, [1, 2, 3])
        try disk.syncData(file)
        try disk.writeAll(file, at: 3, [4, 5, 6])
        #expect(disk.crash(seed: 1, .dropUnsynced).contents(of: "/d/f") == [1, 2, 3])
    }

    @Test func aProcessCrashKeepsEverythingWritten() throws {
        let disk = FaultyFileSystem()
        let file = try freshFile(disk)
        try disk.writeAll(file, at: 0, [1, 2, 3])
        try disk.rename("/d/f", to: "/d/g")
        let after = disk.crash(seed: 1, .processCrash)
        #expect(after.contents(of: "/d/g") == [1, 2, 3])
        #expect(after.contents(of: "/d/f") == nil)
    }

    @Test func aRenameIsDurableOnlyAfterTheDirectorySync() throws {
        for syncDirectory in [false, true] {
            let disk = FaultyFileSystem()
            let file = try freshFile(disk)
            try disk.writeAll(file, at: 0, [9])
            try disk.sync(file)
            try disk.rename("/d/f", to: "/d/g")
            if syncDirectory { try disk.syncDirectory("/d") }
            #expect(disk.crash(seed: 1, .dropUnsynced).names(in: "/d") == [syncDirectory ? "g" : "f"])
        }
    }

    @Test func aTornWriteKeepsWholeSectorsOfItsStart() throws {
        var seen = Set<Int>()
        for seed in UInt64(0)..<64 {
            let disk = FaultyFileSystem()
            let file = try freshFile(disk)
            try disk.writeAll(file, at: 0, [UInt8](repeating: 7, count: 2048))
            try disk.sync(file)
            try disk.writeAll(file, at: 2048, [UInt8](repeating: 8, count: 2048))
            let after = disk.crash(seed: seed).contents(of: "/d/f") ?? []
            #expect(after.count >= 2048 && (after.count - 2048) % 512 == 0)
            #expect(after.prefix(2048).allSatisfy { $0 == 7 } && after.dropFirst(2048).allSatisfy { $0 == 8 })
            seen.insert(after.count)
        }
        #expect(seen.count > 2, "crashes keep different amounts of the unsynced write")
    }

    @Test func aCrashedDiskIsDeadToItsOldProcess() throws {
        let disk = FaultyFileSystem()
        let file = try freshFile(disk)
        _ = disk.crash(seed: 1)
        #expect(disk.isDead)
        #expect(throws: SystemError.self) { try disk.writeAll(file, at: 0, [1]) }
        #expect(throws: SystemError.self) { try disk.listDirectory("/d") }
    }

    @Test func injectedFaultsReturnTheirErrno() throws {
        let disk = FaultyFileSystem()
        let file = try freshFile(disk)
        disk.failNextSync()
        #expect(throws: SystemError("fdatasync", errno: EIO)) { try disk.syncData(file) }
        try disk.syncData(file)
        disk.failNextDirectorySync()
        #expect(throws: SystemError("fsync", errno: EIO)) { try disk.syncDirectory("/d") }
        disk.writeError = ENOSPC
        #expect(throws: SystemError("pwrite", errno: ENOSPC)) { try disk.writeAll(file, at: 0, [1]) }
        disk.writeError = nil
        disk.allocateError = ENOSPC
        #expect(throws: SystemError("posix_fallocate", errno: ENOSPC)) { try disk.allocate(file, offset: 0, length: 10) }
        disk.allocateError = nil
        disk.capacityBytes = 100
        #expect(throws: SystemError("posix_fallocate", errno: ENOSPC)) { try disk.allocate(file, offset: 0, length: 101) }
        #expect(try disk.freeBytes("/d") == 100)
        disk.reportedFreeBytes = 5
        #expect(try disk.freeBytes("/d") == 5)
    }

    @Test func anArmedCrashHappensAtTheChosenSync() throws {
        let disk = FaultyFileSystem()
        let file = try freshFile(disk)
        disk.crash(atSync: 2, seed: 1, .dropUnsynced)
        try disk.writeAll(file, at: 0, [1])
        try disk.syncData(file)
        try disk.writeAll(file, at: 1, [2])
        #expect(throws: SystemError.self) { try disk.syncData(file) }
        #expect(disk.isDead)
        #expect(disk.crashedDisk?.contents(of: "/d/f") == [1])
    }

    @Test func theNativeFileSystemDoesWhatTheSeamPromises() async throws {
        try await withTemporaryDirectory(prefix: "gatehouse-fs") { directory in
            // Every call waits on the disk: they run off the concurrency pool and are checked here.
            let seen = try await offThePool { try Self.exercise(NativeFileSystem(), in: directory.appending("a/b")) }
            #expect(seen.secondCreateNewFailed)
            #expect(seen.sizeAfterAllocate == 8192)
            #expect(seen.readBack == [0, 1, 2, 3, 0])
            #expect(seen.sizeAfterTruncate == 102)
            #expect(seen.namesAfterRename == ["g"])
            #expect(seen.renamedContents == Array(repeating: 0, count: 100) + [1, 2])
            #expect(seen.atomicContents == [5, 6])
            #expect(seen.namesAfterUnlink == ["h"])
            #expect(seen.freeBytes > 0)
            #expect(seen.openMissingFailed)
        }
    }

    /// What ``theNativeFileSystemDoesWhatTheSeamPromises()`` checks.
    struct SeamObservations: Sendable {
        var secondCreateNewFailed = false
        var sizeAfterAllocate = 0
        var readBack: [UInt8] = []
        var sizeAfterTruncate = 0
        var namesAfterRename: [String] = []
        var renamedContents: [UInt8] = []
        var atomicContents: [UInt8] = []
        var namesAfterUnlink: Set<String> = []
        var freeBytes = 0
        var openMissingFailed = false
    }

    static func exercise(_ fs: NativeFileSystem, in path: String) throws -> SeamObservations {
        var seen = SeamObservations()
        try fs.makeDirectoriesDurably(path)
        let file = try fs.open(path + "/f", .createNew)
        seen.secondCreateNewFailed = (try? fs.open(path + "/f", .createNew)) == nil
        try fs.allocate(file, offset: 0, length: 8192)
        try fs.writeAll(file, at: 100, [1, 2, 3])
        try fs.syncData(file)
        seen.sizeAfterAllocate = try fs.size(of: file)
        seen.readBack = try fs.read(file, at: 99, count: 5)
        try fs.truncate(file, to: 102)
        try fs.sync(file)
        fs.close(file)
        seen.sizeAfterTruncate = try fs.fileSize(atPath: path + "/f")
        try fs.rename(path + "/f", to: path + "/g")
        try fs.syncDirectory(path)
        seen.namesAfterRename = try fs.listDirectory(path)
        seen.renamedContents = try fs.readFile(path + "/g")
        try fs.writeFileAtomically(path + "/h", [5, 6])
        seen.atomicContents = try fs.readFile(path + "/h")
        try fs.unlink(path + "/g")
        seen.namesAfterUnlink = Set(try fs.listDirectory(path))
        seen.freeBytes = try fs.freeBytes(path)
        seen.openMissingFailed = (try? fs.open(path + "/missing", .readOnly)) == nil
        return seen
    }
}
