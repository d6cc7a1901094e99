import GatehouseBase
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The server's data directory: created private to the server's user, and home of the
/// generated admin key.
struct DataDirectory {
    let path: String

    /// Creates the directory (and its parents) with mode 0700 if it does not exist.
    static func prepare(_ path: String) throws(GatehouseStartupError) -> DataDirectory {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o700) != 0, errno != EEXIST {
                throw GatehouseStartupError("cannot create data directory \(prefix): \(SystemError("mkdir", errno: errno))")
            }
            prefix += "/"
        }
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw GatehouseStartupError("data directory \(path) is not a directory")
        }
        return DataDirectory(path: path)
    }

    var adminKeyPath: String { path + "/admin.key" }

    /// The admin key stored in `admin.key`, generated (mode 0600, written atomically) when absent.
    /// Answers the key and whether it was generated now.
    func loadOrCreateAdminKey(random: some RandomSource) throws(GatehouseStartupError) -> (key: String, generated: Bool) {
        if let existing = try readAdminKey() { return (existing, false) }
        let key = "ak_" + random.randomToken(alphabet: .base62, length: 43)
        try writeAtomically(adminKeyPath, contents: key + "\n", mode: 0o600)
        return (key, true)
    }

    private func readAdminKey() throws(GatehouseStartupError) -> String? {
        let fd = open(adminKeyPath, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw GatehouseStartupError("cannot read \(adminKeyPath): \(SystemError("open", errno: errno))")
        }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &bytes, bytes.count)
        guard count > 0 else { throw GatehouseStartupError("\(adminKeyPath) is empty; delete it to generate a new key") }
        let key = String(decoding: bytes[..<count], as: UTF8.self).trimmingCharacters(in: " \n\r\t")
        guard !key.isEmpty else { throw GatehouseStartupError("\(adminKeyPath) is empty; delete it to generate a new key") }
        return key
    }

    /// temp file, write, fsync, rename, fsync the directory: after a crash the file is either
    /// absent or whole.
    private func writeAtomically(_ target: String, contents: String, mode: mode_t) throws(GatehouseStartupError) {
        let temporary = target + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw GatehouseStartupError("cannot write \(temporary): \(SystemError("open", errno: errno))") }
        let bytes = Array(contents.utf8)
        let written = write(fd, bytes, bytes.count)
        let synced = fsync(fd)
        close(fd)
        guard written == bytes.count, synced == 0, rename(temporary, target) == 0 else {
            unlink(temporary)
            throw GatehouseStartupError("cannot write \(target): \(SystemError("write", errno: errno))")
        }
        let directory = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }
}

/// Why the server would not start, for the operator.
public struct GatehouseStartupError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var view = Substring(self)
        while let first = view.first, set.contains(first) { view.removeFirst() }
        while let last = view.last, set.contains(last) { view.removeLast() }
        return String(view)
    }
}

extension DataDirectory {
    /// Takes `<data-dir>/LOCK` so a second server (or `gatehouse tenant export`) on the same
    /// directory refuses to start instead of writing the same log.
    func lock() throws(GatehouseStartupError) -> DataDirectoryLock {
        let lockPath = path + "/LOCK"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw GatehouseStartupError("cannot open \(lockPath): \(SystemError("open", errno: errno))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw GatehouseStartupError("\(path) is in use by another gatehouse process (\(lockPath) is locked)")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pwrite(fd, pid, pid.count, 0)
        return DataDirectoryLock(descriptor: fd)
    }
}

/// The held lock on a data directory; released by ``release()``, when dropped, or when the
/// process ends.
final class DataDirectoryLock: Sendable {
    private let descriptor: Mutex<Int32?>

    init(descriptor: Int32) {
        self.descriptor = Mutex(descriptor)
    }

    deinit {
        release()
    }

    func release() {
        guard let fd = descriptor.withLock({ value -> Int32? in
            defer { value = nil }
            return value
        }) else { return }
        _ = flock(fd, LOCK_UN)
        _ = close(fd)
    }
}
