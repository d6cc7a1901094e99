import GatehouseBase
import GatehouseStorage
#if canImport(Glibc)
import Glibc
#endif

// The state behind ``FaultyFileSystem``: files with a durable image and unsynced operations,
// a namespace with a durable copy and unsynced directory operations, handles, and faults.
// Every method runs under the file system's lock.

enum FaultyEntry: Equatable, Sendable {
    case file(Int)
    case directory
}

enum FaultyFileOperation: Sendable {
    case write(offset: Int, bytes: [UInt8])
    case resize(Int)
}

enum FaultyDirectoryOperation: Sendable {
    case link(String, FaultyEntry)
    case rename(String, String)
    case unlink(String)

    /// The directory whose fsync makes this operation durable.
    var directory: String {
        switch self {
        case .link(let path, _), .rename(_, let path), .unlink(let path): FaultyDisk.parent(of: path)
        }
    }
}

struct FaultyInode: Sendable {
    var current: [UInt8] = []
    var durable: [UInt8] = []
    var unsynced: [FaultyFileOperation] = []

    mutating func apply(_ operation: FaultyFileOperation, pending: Bool) {
        Self.apply(operation, to: &current)
        if pending { unsynced.append(operation) }
    }

    // memcpy-style copies: these run for every write of every test, in debug builds too.
    static func apply(_ operation: FaultyFileOperation, to bytes: inout [UInt8]) {
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

struct FaultyHandle: Sendable {
    var inode: Int
    var writable: Bool
}

/// Breaks the recursion of a disk holding the image of its own crash.
final class FaultyCrashedImage: Sendable {
    let disk: FaultyDisk
    init(disk: FaultyDisk) { self.disk = disk }
}

struct FaultyDisk: Sendable {
    var capacityBytes: Int
    var namespace: [String: FaultyEntry] = ["/": .directory]
    var durableNamespace: [String: FaultyEntry] = ["/": .directory]
    var unsyncedDirectoryOperations: [FaultyDirectoryOperation] = []
    var inodes: [Int: FaultyInode] = [:]
    var nextInode = 1
    var handles: [Int32: FaultyHandle] = [:]
    var nextHandle: Int32 = 3
    var isDead = false
    var failNextSync: Int32?
    var failNextDirectorySync: Int32?
    var writeError: Int32?
    var allocateError: Int32?
    var reportedFreeBytes: Int?
    var armedCrash: (count: Int, seed: UInt64, options: FaultyFileSystem.CrashOptions)?
    var crashedImage: FaultyCrashedImage?
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

    func handle(_ file: OpenFile, _ function: String) throws(SystemError) -> FaultyHandle {
        try checkAlive(function)
        guard let handle = handles[file.rawValue] else { throw SystemError(function, errno: EBADF) }
        return handle
    }

    mutating func open(_ path: String, _ mode: FileOpenMode) throws(SystemError) -> OpenFile {
        try checkAlive("open")
        guard case .directory = namespace[FaultyDisk.parent(of: path)] else { throw SystemError("open", errno: ENOENT) }
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
            inodes[inode] = FaultyInode()
            link(path, .file(inode))
        }
        let descriptor = nextHandle
        nextHandle += 1
        handles[descriptor] = FaultyHandle(inode: inode, writable: mode != .readOnly)
        return OpenFile(rawValue: descriptor, path: path)
    }

    private mutating func link(_ path: String, _ entry: FaultyEntry) {
        namespace[path] = entry
        unsyncedDirectoryOperations.append(.link(path, entry))
    }

    mutating func makeDirectory(_ path: String) throws(SystemError) {
        try checkAlive("mkdir")
        guard namespace[path] == nil else { throw SystemError("mkdir", errno: EEXIST) }
        guard case .directory = namespace[FaultyDisk.parent(of: path)] else { throw SystemError("mkdir", errno: ENOENT) }
        link(path, .directory)
    }

    mutating func rename(_ source: String, _ destination: String) throws(SystemError) {
        try checkAlive("rename")
        guard case .file = namespace[source] else { throw SystemError("rename", errno: namespace[source] == nil ? ENOENT : EISDIR) }
        guard case .directory = namespace[FaultyDisk.parent(of: destination)] else { throw SystemError("rename", errno: ENOENT) }
        precondition(FaultyDisk.parent(of: source) == FaultyDisk.parent(of: destination), "FaultyFileSystem renames within one directory only")
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
        var rest: [FaultyDirectoryOperation] = []
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
        crashedImage = FaultyCrashedImage(disk: crashImage(random: SeededRandomSource(seed: armed.seed), armed.options))
        isDead = true
        throw SystemError(function, errno: EIO)
    }

    private static func apply(_ operation: FaultyDirectoryOperation, to namespace: inout [String: FaultyEntry]) {
        switch operation {
        case .link(let path, let entry): namespace[path] = entry
        case .rename(let source, let destination):
            if let entry = namespace.removeValue(forKey: source) { namespace[destination] = entry }
        case .unlink(let path): namespace[path] = nil
        }
    }

    mutating func install(_ bytes: [UInt8], at path: String) {
        var parent = FaultyDisk.parent(of: path)
        var missing: [String] = []
        while namespace[parent] == nil {
            missing.append(parent)
            parent = FaultyDisk.parent(of: parent)
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
        inodes[inode] = FaultyInode(current: bytes, durable: bytes, unsynced: [])
        namespace[path] = .file(inode)
        durableNamespace[path] = .file(inode)
    }

    /// What survives: the durable namespace plus a random prefix of the unsynced directory
    /// operations; for each file, its durable bytes plus a random prefix of its unsynced writes,
    /// the last one torn at a 512-byte boundary.
    func crashImage(random: some RandomSource, _ options: FaultyFileSystem.CrashOptions) -> FaultyDisk {
        func draw(_ upperInclusive: Int) -> Int {
            if options.keepEverything { return max(0, upperInclusive) }
            return upperInclusive <= 0 ? 0 : Int(random.randomUInt64() % UInt64(upperInclusive + 1))
        }
        var image = FaultyDisk(capacityBytes: capacityBytes)
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
            for path in names.keys where path != "/" && names[FaultyDisk.parent(of: path)] != .directory {
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
                        if keep > 0 { FaultyInode.apply(.write(offset: offset, bytes: Array(data[..<keep])), to: &bytes) }
                    } else {
                        FaultyInode.apply(operation, to: &bytes)
                    }
                }
            }
            image.inodes[number] = FaultyInode(current: bytes, durable: bytes, unsynced: [])
        }
        return image
    }
}
