public import GatehouseBase
public import GatehouseStorage
import Synchronization

/// A file system that notes every call made on a thread of the Swift concurrency pool before
/// passing it on. ``TestServer`` puts one under each server it starts and fails the test for
/// each call noted, at ``TestServer/stop()``: a server that touches the disk from an actor
/// stalls half of a two-core machine's pool, in production as in the suite.
public final class PoolGuardedFileSystem: FileSystem {
    public let wrapped: any FileSystem
    let calls: PoolCalls

    init(_ wrapped: any FileSystem, noting calls: PoolCalls) {
        self.wrapped = wrapped
        self.calls = calls
    }

    private func check(_ call: @autoclosure () -> String) {
        if ConcurrencyPool.isCurrentThread { calls.note(call()) }
    }

    public func open(_ path: String, _ mode: FileOpenMode) throws(SystemError) -> OpenFile {
        check("open \(path)")
        return try wrapped.open(path, mode)
    }

    public func close(_ file: OpenFile) {
        check("close \(file)")
        wrapped.close(file)
    }

    public func read(_ file: OpenFile, at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        check("read \(file)")
        return try wrapped.read(file, at: offset, into: buffer)
    }

    public func write(_ file: OpenFile, at offset: Int, from buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        check("write \(file)")
        return try wrapped.write(file, at: offset, from: buffer)
    }

    public func syncData(_ file: OpenFile) throws(SystemError) {
        check("fdatasync \(file)")
        try wrapped.syncData(file)
    }

    public func sync(_ file: OpenFile) throws(SystemError) {
        check("fsync \(file)")
        try wrapped.sync(file)
    }

    public func truncate(_ file: OpenFile, to size: Int) throws(SystemError) {
        check("ftruncate \(file)")
        try wrapped.truncate(file, to: size)
    }

    public func allocate(_ file: OpenFile, offset: Int, length: Int) throws(SystemError) {
        check("fallocate \(file)")
        try wrapped.allocate(file, offset: offset, length: length)
    }

    public func size(of file: OpenFile) throws(SystemError) -> Int {
        check("fstat \(file)")
        return try wrapped.size(of: file)
    }

    public func fileSize(atPath path: String) throws(SystemError) -> Int {
        check("stat \(path)")
        return try wrapped.fileSize(atPath: path)
    }

    public func rename(_ source: String, to destination: String) throws(SystemError) {
        check("rename \(source) to \(destination)")
        try wrapped.rename(source, to: destination)
    }

    public func unlink(_ path: String) throws(SystemError) {
        check("unlink \(path)")
        try wrapped.unlink(path)
    }

    public func listDirectory(_ path: String) throws(SystemError) -> [String] {
        check("list \(path)")
        return try wrapped.listDirectory(path)
    }

    public func makeDirectory(_ path: String) throws(SystemError) {
        check("mkdir \(path)")
        try wrapped.makeDirectory(path)
    }

    public func syncDirectory(_ path: String) throws(SystemError) {
        check("fsync directory \(path)")
        try wrapped.syncDirectory(path)
    }

    public func freeBytes(_ path: String) throws(SystemError) -> Int {
        check("statvfs \(path)")
        return try wrapped.freeBytes(path)
    }
}

/// The calls a ``PoolGuardedFileSystem`` noted, each once, shared by a test server and the
/// servers its restarts start.
final class PoolCalls: Sendable {
    /// Enough to tell what went wrong without a runaway list.
    private static let kept = 20
    private let noted = Mutex<[String]>([])

    func note(_ call: String) {
        noted.withLock { noted in
            if noted.count < Self.kept, !noted.contains(call) { noted.append(call) }
        }
    }

    /// The calls noted since the last take.
    func take() -> [String] {
        noted.withLock { noted in
            defer { noted = [] }
            return noted
        }
    }
}
