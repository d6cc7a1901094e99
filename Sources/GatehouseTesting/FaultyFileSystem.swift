public import GatehouseBase
public import GatehouseStorage
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An in-memory file system that can lie the way disks and kernels do, for crash and fault
/// tests of the storage layer (storage.md Part D, item 3: SQLite's test6.c, FoundationDB's
/// AsyncFileNonDurable, LevelDB's fault_injection_test).
///
/// It keeps, per file, what a crash would leave (the *durable* image) and the writes since the
/// last fsync/fdatasync; per directory, the creations, renames and removals since its last
/// directory fsync. ``crash(seed:_:)`` returns the disk a rebooted machine would see: durable
/// state, plus (optionally) a random prefix of the unsynced operations with the last kept write
/// torn at a 512-byte boundary. The crashed instance itself is dead: every call fails with EIO,
/// as for a process that no longer exists.
///
/// Faults: the next fsync/fdatasync (or directory fsync) fails with EIO; writes or allocations
/// fail with ENOSPC (or any errno); a capacity limit; a reported free-space figure; bit flips.
public final class FaultyFileSystem: FileSystem {
    /// What survives a crash besides the synced state.
    public struct CrashOptions: Sendable {
        /// Keep a random prefix of each file's unsynced writes (otherwise drop them all).
        public var keepUnsyncedWrites = true
        /// Tear the last kept write of each file at a random 512-byte boundary.
        public var tearLastWrite = true
        /// Keep a random prefix of the unsynced directory operations (otherwise drop them all).
        public var keepUnsyncedDirectoryOperations = true

        public init(keepUnsyncedWrites: Bool = true, tearLastWrite: Bool = true, keepUnsyncedDirectoryOperations: Bool = true) {
            self.keepUnsyncedWrites = keepUnsyncedWrites
            self.tearLastWrite = tearLastWrite
            self.keepUnsyncedDirectoryOperations = keepUnsyncedDirectoryOperations
        }

        /// Keep every unsynced operation, untorn, instead of a random prefix.
        public var keepEverything = false

        /// Only what was synced survives.
        public static let dropUnsynced = CrashOptions(keepUnsyncedWrites: false, tearLastWrite: false, keepUnsyncedDirectoryOperations: false)

        /// A process crash (kill -9) with the kernel alive: everything written survives.
        public static var processCrash: CrashOptions {
            var options = CrashOptions(keepUnsyncedWrites: true, tearLastWrite: false, keepUnsyncedDirectoryOperations: true)
            options.keepEverything = true
            return options
        }
    }

    private let disk: Mutex<FaultyDisk>
    private let gate = Mutex(SyncGate())

    private struct SyncGate {
        var heldSuffix: String?
        var waiting = 0
    }

    /// - Parameter capacityBytes: total file bytes the disk holds; writes and allocations past
    ///   it fail with ENOSPC.
    public init(capacityBytes: Int = 1 << 40) {
        disk = Mutex(FaultyDisk(capacityBytes: capacityBytes))
    }

    private init(disk: FaultyDisk) {
        self.disk = Mutex(disk)
    }

    // MARK: Crashes

    /// The disk as a rebooted machine would find it. This instance is dead afterwards.
    public func crash(seed: UInt64, _ options: CrashOptions = CrashOptions()) -> FaultyFileSystem {
        let image = disk.withLock { disk in
            defer { disk.isDead = true }
            return disk.crashImage(random: SeededRandomSource(seed: seed), options)
        }
        return FaultyFileSystem(disk: image)
    }

    /// Arms a crash at the `count`-th sync (file or directory, counting from now): that sync
    /// fails with EIO, the instance dies, and ``crashedDisk`` holds the image from just before it.
    public func crash(atSync count: Int, seed: UInt64, _ options: CrashOptions = CrashOptions()) {
        precondition(count >= 1, "crash(atSync:) counts from 1")
        disk.withLock { $0.armedCrash = (count, seed, options) }
    }

    /// The image left by an armed crash, once it happened.
    public var crashedDisk: FaultyFileSystem? {
        disk.withLock { disk in disk.crashedImage.map { FaultyFileSystem(disk: $0.disk) } }
    }

    public var isDead: Bool {
        disk.withLock { $0.isDead }
    }

    // MARK: Faults

    /// The next fsync or fdatasync of a file fails with `errno` (EIO when nil).
    public func failNextSync(errno code: Int32? = nil) {
        disk.withLock { $0.failNextSync = code ?? EIO }
    }

    /// The next directory fsync fails with `errno` (EIO when nil).
    public func failNextDirectorySync(errno code: Int32? = nil) {
        disk.withLock { $0.failNextDirectorySync = code ?? EIO }
    }

    /// While set, every write fails with this errno (ENOSPC, EIO, ...).
    public var writeError: Int32? {
        get { disk.withLock { $0.writeError } }
        set { disk.withLock { $0.writeError = newValue } }
    }

    /// While set, every allocation (fallocate) fails with this errno.
    public var allocateError: Int32? {
        get { disk.withLock { $0.allocateError } }
        set { disk.withLock { $0.allocateError = newValue } }
    }

    /// What `freeBytes` reports; nil reports capacity minus the bytes in files.
    public var reportedFreeBytes: Int? {
        get { disk.withLock { $0.reportedFreeBytes } }
        set { disk.withLock { $0.reportedFreeBytes = newValue } }
    }

    public var capacityBytes: Int {
        get { disk.withLock { $0.capacityBytes } }
        set { disk.withLock { $0.capacityBytes = newValue } }
    }

    /// Flips one bit of a file, in what is on disk and in what reads return.
    public func flipBit(path: String, offset: Int, bit: Int = 0) {
        disk.withLock { disk in
            guard let inode = disk.inode(at: FaultyDisk.normalize(path)) else { preconditionFailure("no file at \(path)") }
            disk.inodes[inode]!.flip(offset: offset, bit: bit)
        }
    }

    /// Makes every sync of a file whose path ends with `suffix` wait (before it does anything)
    /// until ``releaseSyncs()``: lets a test hold the log's flusher inside fdatasync while
    /// appenders queue behind it. Other files (a segment being prepared) sync normally.
    /// The wait holds the syncing thread, which is the log's own: a server under test never
    /// syncs from the concurrency pool (``TestServer`` fails a test that does).
    public func holdSyncs(ofFilesEndingWith suffix: String = ".wal") {
        gate.withLock { $0.heldSuffix = suffix }
    }

    public func releaseSyncs() {
        gate.withLock { $0.heldSuffix = nil }
    }

    /// Syncs currently held by ``holdSyncs()``.
    public var syncsWaiting: Int {
        gate.withLock { $0.waiting }
    }

    private func passSyncGate(_ file: OpenFile) {
        func held(_ gate: SyncGate) -> Bool { gate.heldSuffix.map { file.path.hasSuffix($0) } ?? false }
        guard gate.withLock({ gate in
            if held(gate) { gate.waiting += 1 }
            return held(gate)
        }) else { return }
        while gate.withLock({ held($0) }) { usleep(200) }
        gate.withLock { $0.waiting -= 1 }
    }

    // MARK: Inspection

    /// Bytes the file holds now (what reads return), or nil if there is no such file.
    public func contents(of path: String) -> [UInt8]? {
        disk.withLock { disk in disk.inode(at: FaultyDisk.normalize(path)).map { disk.inodes[$0]!.current } }
    }

    /// Replaces (or creates, with missing parent directories) a file, durable at once.
    public func setContents(_ bytes: [UInt8], of path: String) {
        disk.withLock { $0.install(bytes, at: FaultyDisk.normalize(path)) }
    }

    /// Names in a directory now, sorted.
    public func names(in directory: String) -> [String] {
        disk.withLock { disk in disk.children(of: FaultyDisk.normalize(directory)).sorted() }
    }

    /// File fsyncs/fdatasyncs and directory fsyncs that succeeded.
    public var syncCount: Int { disk.withLock { $0.syncs } }
    public var directorySyncCount: Int { disk.withLock { $0.directorySyncs } }

    // MARK: FileSystem

    public func open(_ path: String, _ mode: FileOpenMode) throws(SystemError) -> OpenFile {
        try disk.withLock { (disk) throws(SystemError) in try disk.open(FaultyDisk.normalize(path), mode) }
    }

    public func close(_ file: OpenFile) {
        disk.withLock { _ = $0.handles.removeValue(forKey: file.rawValue) }
    }

    public func read(_ file: OpenFile, at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        try disk.withLock { (disk) throws(SystemError) in
            let inode = try disk.handle(file, "pread").inode
            let bytes = disk.inodes[inode]!.current
            guard offset < bytes.count else { return 0 }
            let count = min(buffer.count, bytes.count - offset)
            bytes.withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<offset + count]))
            }
            return count
        }
    }

    public func write(_ file: OpenFile, at offset: Int, from buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        try disk.withLock { (disk) throws(SystemError) in
            let handle = try disk.handle(file, "pwrite")
            guard handle.writable else { throw SystemError("pwrite", errno: EBADF) }
            if let error = disk.writeError { throw SystemError("pwrite", errno: error) }
            let growth = max(0, offset + buffer.count - disk.inodes[handle.inode]!.current.count)
            guard disk.usedBytes + growth <= disk.capacityBytes else { throw SystemError("pwrite", errno: ENOSPC) }
            let data = [UInt8](unsafeUninitializedCapacity: buffer.count) { target, count in
                UnsafeMutableRawBufferPointer(target).copyMemory(from: buffer)
                count = buffer.count
            }
            disk.inodes[handle.inode]!.apply(.write(offset: offset, bytes: data), pending: true)
            return buffer.count
        }
    }

    public func syncData(_ file: OpenFile) throws(SystemError) {
        passSyncGate(file)
        return try disk.withLock { (disk) throws(SystemError) in try disk.syncFile(file, "fdatasync") }
    }

    public func sync(_ file: OpenFile) throws(SystemError) {
        passSyncGate(file)
        return try disk.withLock { (disk) throws(SystemError) in try disk.syncFile(file, "fsync") }
    }

    public func truncate(_ file: OpenFile, to size: Int) throws(SystemError) {
        try disk.withLock { (disk) throws(SystemError) in
            let handle = try disk.handle(file, "ftruncate")
            guard handle.writable else { throw SystemError("ftruncate", errno: EBADF) }
            let growth = max(0, size - disk.inodes[handle.inode]!.current.count)
            guard disk.usedBytes + growth <= disk.capacityBytes else { throw SystemError("ftruncate", errno: ENOSPC) }
            disk.inodes[handle.inode]!.apply(.resize(size), pending: true)
        }
    }

    public func allocate(_ file: OpenFile, offset: Int, length: Int) throws(SystemError) {
        try disk.withLock { (disk) throws(SystemError) in
            let handle = try disk.handle(file, "posix_fallocate")
            if let error = disk.allocateError { throw SystemError("posix_fallocate", errno: error) }
            let size = disk.inodes[handle.inode]!.current.count
            let growth = max(0, offset + length - size)
            guard disk.usedBytes + growth <= disk.capacityBytes else { throw SystemError("posix_fallocate", errno: ENOSPC) }
            if growth > 0 { disk.inodes[handle.inode]!.apply(.resize(offset + length), pending: true) }
        }
    }

    public func size(of file: OpenFile) throws(SystemError) -> Int {
        try disk.withLock { (disk) throws(SystemError) in
            let inode = try disk.handle(file, "fstat").inode
            return disk.inodes[inode]!.current.count
        }
    }

    public func fileSize(atPath path: String) throws(SystemError) -> Int {
        try disk.withLock { (disk) throws(SystemError) in
            try disk.checkAlive("stat")
            switch disk.namespace[FaultyDisk.normalize(path)] {
            case .file(let inode): return disk.inodes[inode]!.current.count
            case .directory: return 0
            case nil: throw SystemError("stat", errno: ENOENT)
            }
        }
    }

    public func rename(_ source: String, to destination: String) throws(SystemError) {
        try disk.withLock { (disk) throws(SystemError) in try disk.rename(FaultyDisk.normalize(source), FaultyDisk.normalize(destination)) }
    }

    public func unlink(_ path: String) throws(SystemError) {
        try disk.withLock { (disk) throws(SystemError) in try disk.unlink(FaultyDisk.normalize(path)) }
    }

    public func listDirectory(_ path: String) throws(SystemError) -> [String] {
        try disk.withLock { (disk) throws(SystemError) in
            try disk.checkAlive("opendir")
            let directory = FaultyDisk.normalize(path)
            guard case .directory = disk.namespace[directory] else {
                throw SystemError("opendir", errno: disk.namespace[directory] == nil ? ENOENT : ENOTDIR)
            }
            return disk.children(of: directory)
        }
    }

    public func makeDirectory(_ path: String) throws(SystemError) {
        try disk.withLock { (disk) throws(SystemError) in try disk.makeDirectory(FaultyDisk.normalize(path)) }
    }

    public func syncDirectory(_ path: String) throws(SystemError) {
        try disk.withLock { (disk) throws(SystemError) in try disk.syncDirectory(FaultyDisk.normalize(path)) }
    }

    public func freeBytes(_ path: String) throws(SystemError) -> Int {
        try disk.withLock { (disk) throws(SystemError) in
            try disk.checkAlive("statvfs")
            return disk.reportedFreeBytes ?? max(0, disk.capacityBytes - disk.usedBytes)
        }
    }
}
