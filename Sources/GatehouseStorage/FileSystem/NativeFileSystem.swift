public import GatehouseBase
#if canImport(Glibc)
import Glibc
#endif

/// The real disk, through Glibc and GatehouseBase's syscall wrapper (which retries `EINTR`).
public struct NativeFileSystem: FileSystem {
    public init() {}

    public func open(_ path: String, _ mode: FileOpenMode) throws(SystemError) -> OpenFile {
        let flags: Int32
        switch mode {
        case .readOnly: flags = O_RDONLY
        case .readWrite: flags = O_RDWR
        case .createNew: flags = O_RDWR | O_CREAT | O_EXCL
        case .createOrTruncate: flags = O_RDWR | O_CREAT | O_TRUNC
        }
        let descriptor = try blockingSyscall("open") { Glibc.open(path, flags | O_CLOEXEC, 0o600) }
        return OpenFile(rawValue: descriptor, path: path)
    }

    public func close(_ file: OpenFile) {
        // close(2) must not be retried on EINTR on Linux: the descriptor is gone either way.
        _ = Glibc.close(file.rawValue)
    }

    public func read(_ file: OpenFile, at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try blockingSyscall("pread") { pread(file.rawValue, base, buffer.count, off_t(offset)) }
    }

    public func write(_ file: OpenFile, at offset: Int, from buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try blockingSyscall("pwrite") { pwrite(file.rawValue, base, buffer.count, off_t(offset)) }
    }

    public func syncData(_ file: OpenFile) throws(SystemError) {
        _ = try blockingSyscall("fdatasync") { fdatasync(file.rawValue) }
    }

    public func sync(_ file: OpenFile) throws(SystemError) {
        _ = try blockingSyscall("fsync") { fsync(file.rawValue) }
    }

    public func truncate(_ file: OpenFile, to size: Int) throws(SystemError) {
        _ = try blockingSyscall("ftruncate") { ftruncate(file.rawValue, off_t(size)) }
    }

    public func allocate(_ file: OpenFile, offset: Int, length: Int) throws(SystemError) {
        // posix_fallocate returns the error number instead of setting errno.
        while true {
            let status = posix_fallocate(file.rawValue, off_t(offset), off_t(length))
            if status == 0 { return }
            if status == EINTR { continue }
            throw SystemError("posix_fallocate", errno: status)
        }
    }

    public func size(of file: OpenFile) throws(SystemError) -> Int {
        var status = stat()
        _ = try blockingSyscall("fstat") { fstat(file.rawValue, &status) }
        return Int(status.st_size)
    }

    public func fileSize(atPath path: String) throws(SystemError) -> Int {
        var status = stat()
        _ = try blockingSyscall("stat") { stat(path, &status) }
        return Int(status.st_size)
    }

    public func rename(_ source: String, to destination: String) throws(SystemError) {
        _ = try blockingSyscall("rename") { Glibc.rename(source, destination) }
    }

    public func unlink(_ path: String) throws(SystemError) {
        _ = try blockingSyscall("unlink") { Glibc.unlink(path) }
    }

    public func listDirectory(_ path: String) throws(SystemError) -> [String] {
        var opened: OpaquePointer?
        _ = try blockingSyscall("opendir") { () -> Int32 in
            opened = opendir(path)
            return opened == nil ? -1 : 0
        }
        guard let directory = opened else { throw SystemError("opendir", errno: EIO) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    public func makeDirectory(_ path: String) throws(SystemError) {
        _ = try blockingSyscall("mkdir") { mkdir(path, 0o700) }
    }

    public func syncDirectory(_ path: String) throws(SystemError) {
        let descriptor = try blockingSyscall("open") { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { _ = Glibc.close(descriptor) }
        _ = try blockingSyscall("fsync") { fsync(descriptor) }
    }

    public func freeBytes(_ path: String) throws(SystemError) -> Int {
        var status = statvfs()
        _ = try blockingSyscall("statvfs") { statvfs(path, &status) }
        let bytes = UInt64(status.f_bavail) * UInt64(status.f_frsize)
        return Int(clamping: bytes)
    }
}
