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

    @Test func theNativeFileSystemDoesWhatTheSeamPromises() throws {
        let directory = try TemporaryDirectory(prefix: "gatehouse-fs")
        defer { directory.remove() }
        let fs = NativeFileSystem()
        let path = directory.appending("a/b")
        try fs.makeDirectoriesDurably(path)
        let file = try fs.open(path + "/f", .createNew)
        #expect(throws: SystemError.self) { try fs.open(path + "/f", .createNew) }
        try fs.allocate(file, offset: 0, length: 8192)
        try fs.writeAll(file, at: 100, [1, 2, 3])
        try fs.syncData(file)
        #expect(try fs.size(of: file) == 8192)
        #expect(try fs.read(file, at: 99, count: 5) == [0, 1, 2, 3, 0])
        try fs.truncate(file, to: 102)
        try fs.sync(file)
        fs.close(file)
        #expect(try fs.fileSize(atPath: path + "/f") == 102)
        try fs.rename(path + "/f", to: path + "/g")
        try fs.syncDirectory(path)
        #expect(try fs.listDirectory(path) == ["g"])
        #expect(try fs.readFile(path + "/g") == Array(repeating: 0, count: 100) + [1, 2])
        try fs.writeFileAtomically(path + "/h", [5, 6])
        #expect(try fs.readFile(path + "/h") == [5, 6])
        try fs.unlink(path + "/g")
        #expect(Set(try fs.listDirectory(path)) == ["h"])
        #expect(try fs.freeBytes(path) > 0)
        #expect(throws: SystemError.self) { try fs.open(path + "/missing", .readOnly) }
    }
}
