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

    private let disk: Mutex<Disk>
    private let gate = Mutex(SyncGate())

    private struct SyncGate {
        var heldSuffix: String?
        var waiting = 0
    }

    /// - Parameter capacityBytes: total file bytes the disk holds; writes and allocations past
    ///   it fail with ENOSPC.
    public init(capacityBytes: Int = 1 << 40) {
        disk = Mutex(Disk(capacityBytes: capacityBytes))
    }

    private init(disk: Disk) {
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
            guard let inode = disk.inode(at: Disk.normalize(path)) else { preconditionFailure("no file at \(path)") }
            disk.inodes[inode]!.flip(offset: offset, bit: bit)
        }
    }

    /// Makes every sync of a file whose path ends with `suffix` wait (before it does anything)
    /// until ``releaseSyncs()``: lets a test hold the log's flusher inside fdatasync while
    /// appenders queue behind it. Other files (a segment being prepared) sync normally.
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
        disk.withLock { disk in disk.inode(at: Disk.normalize(path)).map { disk.inodes[$0]!.current } }
    }

    /// Replaces (or creates, with missing parent directories) a file, durable at once.
    public func setContents(_ bytes: [UInt8], of path: String) {
        disk.withLock { $0.install(bytes, at: Disk.normalize(path)) }
    }

    /// Names in a directory now, sorted.
    public func names(in directory: String) -> [String] {
        disk.withLock { disk in disk.children(of: Disk.normalize(directory)).sorted() }
    }

    /// File fsyncs/fdatasyncs and directory fsyncs that succeeded.
    public var syncCount: Int { disk.withLock { $0.syncs } }
    public var directorySyncCount: Int { disk.withLock { $0.directorySyncs } }

    // MARK: FileSystem

    public func open(_ path: String, _ mode: FileOpenMode) throws(SystemError) -> OpenFile {
        try disk.withLock { (disk) throws(SystemError) in try disk.open(Disk.normalize(path), mode) }
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
            switch disk.namespace[Disk.normalize(path)] {
            case .file(let inode): return disk.inodes[inode]!.current.count
            case .directory: return 0
            case nil: throw SystemError("stat", errno: ENOENT)
            }
        }
    }

    public func rename(_ source: String, to destination: String) throws(SystemError) {
        try disk.withLock { (disk) throws(SystemError) in try disk.rename(Disk.normalize(source), Disk.normalize(destination)) }
    }

    public func unlink(_ path: String) throws(SystemError) {
        try disk.withLock { (disk) throws(SystemError) in try disk.unlink(Disk.normalize(path)) }
    }

    public func listDirectory(_ path: String) throws(SystemError) -> [String] {
        try disk.withLock { (disk) throws(SystemError) in
            try disk.checkAlive("opendir")
            let directory = Disk.normalize(path)
            guard case .directory = disk.namespace[directory] else {
                throw SystemError("opendir", errno: disk.namespace[directory] == nil ? ENOENT : ENOTDIR)
            }
            return disk.children(of: directory)
        }
    }

    public func makeDirectory(_ path: String) throws(SystemError) {
        try disk.withLock { (disk) throws(SystemError) in try disk.makeDirectory(Disk.normalize(path)) }
    }

    public func syncDirectory(_ path: String) throws(SystemError) {
        try disk.withLock { (disk) throws(SystemError) in try disk.syncDirectory(Disk.normalize(path)) }
    }

    public func freeBytes(_ path: String) throws(SystemError) -> Int {
        try disk.withLock { (disk) throws(SystemError) in
            try disk.checkAlive("statvfs")
            return disk.reportedFreeBytes ?? max(0, disk.capacityBytes - disk.usedBytes)
        }
    }
}

// MARK: - The model

private enum Entry: Equatable, Sendable {
    case file(Int)
    case directory
}

private enum FileOperation: Sendable {
    case write(offset: Int, bytes: [UInt8])
    case resize(Int)
}

private enum DirectoryOperation: Sendable {
    case link(String, Entry)
    case rename(String, String)
    case unlink(String)

    /// The directory whose fsync makes this operation durable.
    var directory: String {
        switch self {
        case .link(let path, _), .rename(_, let path), .unlink(let path): Disk.parent(of: path)
        }
    }
}

private struct Inode: Sendable {
    var current: [UInt8] = []
    var durable: [UInt8] = []
    var unsynced: [FileOperation] = []

    mutating func apply(_ operation: FileOperation, pending: Bool) {
        Self.apply(operation, to: &current)
        if pending { unsynced.append(operation) }
    }

    // memcpy-style copies: these run for every write of every test, in debug builds too.
    static func apply(_ operation: FileOperation, to bytes: inout [UInt8]) {
        switch operation {
        case .write(let offset, let data):
            if bytes.count < offset + data.count { bytes += [UInt8](repeating: 0, count: offset + data.count - bytes.count) }
            bytes.withUnsafeMutableBytes { target in
                data.withUnsafeBytes { source in
                    UnsafeMutableRawBufferPointer(rebasing: target[offset..<offset + data.count]).copyMemory(from: source)
                }
            }
        case .resize(let size):
            if size < bytes.count { bytes.removeSubrange(size...) } else { bytes += [UInt8](repeating: 0, count: size - bytes.count) }
        }
    }

    mutating func sync() {
        durable = current
        unsynced = []
    }

    mutating func flip(offset: Int, bit: Int) {
        precondition(offset < current.count, "bit flip past the end of the file")
        current[offset] ^= UInt8(1) << UInt8(bit)
        if offset < durable.count { durable[offset] ^= UInt8(1) << UInt8(bit) }
        for index in unsynced.indices {
            if case .write(let start, var data) = unsynced[index], (start..<start + data.count).contains(offset) {
                data[offset - start] ^= UInt8(1) << UInt8(bit)
                unsynced[index] = .write(offset: start, bytes: data)
            }
        }
    }
}

private struct Handle: Sendable {
    var inode: Int
    var writable: Bool
}

/// Breaks the recursion of a disk holding the image of its own crash.
private final class CrashedImage: Sendable {
    let disk: Disk
    init(disk: Disk) { self.disk = disk }
}

private struct Disk: Sendable {
    var capacityBytes: Int
    var namespace: [String: Entry] = ["/": .directory]
    var durableNamespace: [String: Entry] = ["/": .directory]
    var unsyncedDirectoryOperations: [DirectoryOperation] = []
    var inodes: [Int: Inode] = [:]
    var nextInode = 1
    var handles: [Int32: Handle] = [:]
    var nextHandle: Int32 = 3
    var isDead = false
    var failNextSync: Int32?
    var failNextDirectorySync: Int32?
    var writeError: Int32?
    var allocateError: Int32?
    var reportedFreeBytes: Int?
    var armedCrash: (count: Int, seed: UInt64, options: FaultyFileSystem.CrashOptions)?
    var crashedImage: CrashedImage?
    var syncs = 0
    var directorySyncs = 0

    init(capacityBytes: Int) {
        self.capacityBytes = capacityBytes
    }

    static func normalize(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        return "/" + parts.joined(separator: "/")
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    var usedBytes: Int {
        inodes.values.reduce(0) { $0 + $1.current.count }
    }

    func checkAlive(_ function: String) throws(SystemError) {
        if isDead { throw SystemError(function, errno: EIO) }
    }

    func inode(at path: String) -> Int? {
        if case .file(let inode) = namespace[path] { return inode }
        return nil
    }

    func children(of directory: String) -> [String] {
        let prefix = directory == "/" ? "/" : directory + "/"
        return namespace.keys.compactMap { path in
            guard path != "/", path.hasPrefix(prefix) else { return nil }
            let name = path.dropFirst(prefix.count)
            return name.contains("/") ? nil : String(name)
        }
    }

    func handle(_ file: OpenFile, _ function: String) throws(SystemError) -> Handle {
        try checkAlive(function)
        guard let handle = handles[file.rawValue] else { throw SystemError(function, errno: EBADF) }
        return handle
    }

    mutating func open(_ path: String, _ mode: FileOpenMode) throws(SystemError) -> OpenFile {
        try checkAlive("open")
        guard case .directory = namespace[Disk.parent(of: path)] else { throw SystemError("open", errno: ENOENT) }
        var inode: Int
        switch (namespace[path], mode) {
        case (.directory, _):
            throw SystemError("open", errno: EISDIR)
        case (.file, .createNew):
            throw SystemError("open", errno: EEXIST)
        case (.file(let existing), .createOrTruncate):
            inode = existing
            inodes[inode]!.apply(.resize(0), pending: true)
        case (.file(let existing), _):
            inode = existing
        case (nil, .readOnly), (nil, .readWrite):
            throw SystemError("open", errno: ENOENT)
        case (nil, .createNew), (nil, .createOrTruncate):
            inode = nextInode
            nextInode += 1
            inodes[inode] = Inode()
            link(path, .file(inode))
        }
        let descriptor = nextHandle
        nextHandle += 1
        handles[descriptor] = Handle(inode: inode, writable: mode != .readOnly)
        return OpenFile(rawValue: descriptor, path: path)
    }

    private mutating func link(_ path: String, _ entry: Entry) {
        namespace[path] = entry
        unsyncedDirectoryOperations.append(.link(path, entry))
    }

    mutating func makeDirectory(_ path: String) throws(SystemError) {
        try checkAlive("mkdir")
        guard namespace[path] == nil else { throw SystemError("mkdir", errno: EEXIST) }
        guard case .directory = namespace[Disk.parent(of: path)] else { throw SystemError("mkdir", errno: ENOENT) }
        link(path, .directory)
    }

    mutating func rename(_ source: String, _ destination: String) throws(SystemError) {
        try checkAlive("rename")
        guard case .file = namespace[source] else { throw SystemError("rename", errno: namespace[source] == nil ? ENOENT : EISDIR) }
        guard case .directory = namespace[Disk.parent(of: destination)] else { throw SystemError("rename", errno: ENOENT) }
        precondition(Disk.parent(of: source) == Disk.parent(of: destination), "FaultyFileSystem renames within one directory only")
        namespace[destination] = namespace.removeValue(forKey: source)
        unsyncedDirectoryOperations.append(.rename(source, destination))
    }

    mutating func unlink(_ path: String) throws(SystemError) {
        try checkAlive("unlink")
        guard case .file = namespace[path] else { throw SystemError("unlink", errno: namespace[path] == nil ? ENOENT : EISDIR) }
        namespace[path] = nil
        unsyncedDirectoryOperations.append(.unlink(path))
    }

    mutating func syncFile(_ file: OpenFile, _ function: String) throws(SystemError) {
        let handle = try handle(file, function)
        try crashIfArmed(function)
        if let error = failNextSync {
            failNextSync = nil
            throw SystemError(function, errno: error)
        }
        inodes[handle.inode]!.sync()
        syncs += 1
    }

    mutating func syncDirectory(_ path: String) throws(SystemError) {
        try checkAlive("fsync")
        guard case .directory = namespace[path] else { throw SystemError("open", errno: namespace[path] == nil ? ENOENT : ENOTDIR) }
        try crashIfArmed("fsync")
        if let error = failNextDirectorySync {
            failNextDirectorySync = nil
            throw SystemError("fsync", errno: error)
        }
        var rest: [DirectoryOperation] = []
        for operation in unsyncedDirectoryOperations {
            if operation.directory == path { Self.apply(operation, to: &durableNamespace) } else { rest.append(operation) }
        }
        unsyncedDirectoryOperations = rest
        directorySyncs += 1
    }

    private mutating func crashIfArmed(_ function: String) throws(SystemError) {
        guard let armed = armedCrash else { return }
        if armed.count > 1 {
            armedCrash = (armed.count - 1, armed.seed, armed.options)
            return
        }
        armedCrash = nil
        crashedImage = CrashedImage(disk: crashImage(random: SeededRandomSource(seed: armed.seed), armed.options))
        isDead = true
        throw SystemError(function, errno: EIO)
    }

    private static func apply(_ operation: DirectoryOperation, to namespace: inout [String: Entry]) {
        switch operation {
        case .link(let path, let entry): namespace[path] = entry
        case .rename(let source, let destination):
            if let entry = namespace.removeValue(forKey: source) { namespace[destination] = entry }
        case .unlink(let path): namespace[path] = nil
        }
    }

    mutating func install(_ bytes: [UInt8], at path: String) {
        var parent = Disk.parent(of: path)
        var missing: [String] = []
        while namespace[parent] == nil {
            missing.append(parent)
            parent = Disk.parent(of: parent)
        }
        for directory in missing.reversed() {
            namespace[directory] = .directory
            durableNamespace[directory] = .directory
        }
        let inode: Int
        if case .file(let existing) = namespace[path] {
            inode = existing
        } else {
            inode = nextInode
            nextInode += 1
        }
        inodes[inode] = Inode(current: bytes, durable: bytes, unsynced: [])
        namespace[path] = .file(inode)
        durableNamespace[path] = .file(inode)
    }

    /// What survives: the durable namespace plus a random prefix of the unsynced directory
    /// operations; for each file, its durable bytes plus a random prefix of its unsynced writes,
    /// the last one torn at a 512-byte boundary.
    func crashImage(random: some RandomSource, _ options: FaultyFileSystem.CrashOptions) -> Disk {
        func draw(_ upperInclusive: Int) -> Int {
            if options.keepEverything { return max(0, upperInclusive) }
            return upperInclusive <= 0 ? 0 : Int(random.randomUInt64() % UInt64(upperInclusive + 1))
        }
        var image = Disk(capacityBytes: capacityBytes)
        image.nextInode = nextInode
        image.reportedFreeBytes = reportedFreeBytes
        var names = durableNamespace
        if options.keepUnsyncedDirectoryOperations {
            for operation in unsyncedDirectoryOperations.prefix(draw(unsyncedDirectoryOperations.count)) {
                Self.apply(operation, to: &names)
            }
        }
        // Entries whose directory did not survive are gone with it.
        var changed = true
        while changed {
            changed = false
            for path in names.keys where path != "/" && names[Disk.parent(of: path)] != .directory {
                names[path] = nil
                changed = true
            }
        }
        image.namespace = names
        image.durableNamespace = names
        for case .file(let number) in names.values where image.inodes[number] == nil {
            let inode = inodes[number]!
            var bytes = inode.durable
            if options.keepUnsyncedWrites {
                let kept = inode.unsynced.prefix(draw(inode.unsynced.count))
                for (index, operation) in kept.enumerated() {
                    if index == kept.count - 1, options.tearLastWrite, !options.keepEverything, case .write(let offset, let data) = operation {
                        // Keep whole sectors up to a random sector boundary inside the write, or all of it.
                        let firstBoundary = (offset + 511) / 512 * 512
                        let boundaries = [offset] + stride(from: firstBoundary, to: offset + data.count, by: 512).filter { $0 > offset } + [offset + data.count]
                        let cut = boundaries[draw(boundaries.count - 1)]
                        let keep = max(0, min(data.count, cut - offset))
                        if keep > 0 { Inode.apply(.write(offset: offset, bytes: Array(data[..<keep])), to: &bytes) }
                    } else {
                        Inode.apply(operation, to: &bytes)
                    }
                }
            }
            image.inodes[number] = Inode(current: bytes, durable: bytes, unsynced: [])
        }
        return image
    }
}
