public import GatehouseBase

/// An open file of a ``FileSystem``: a descriptor for ``NativeFileSystem``, a handle for test
/// file systems. The path is kept for error messages.
public struct OpenFile: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int32
    public let path: String

    public init(rawValue: Int32, path: String) {
        self.rawValue = rawValue
        self.path = path
    }

    public var description: String { path }
}

/// How ``FileSystem/open(_:_:)`` opens a file.
public enum FileOpenMode: Sendable, Hashable {
    case readOnly
    /// An existing file, for reading and writing.
    case readWrite
    /// A new file (fails with `EEXIST` if it exists), for reading and writing, mode 0600.
    case createNew
    /// Creates the file or empties an existing one, for reading and writing, mode 0600.
    case createOrTruncate
}

/// The seam between the storage layer and the disk. ``NativeFileSystem`` calls Glibc;
/// `FaultyFileSystem` (GatehouseTesting) keeps files in memory and can crash, tear writes,
/// fail syncs and run out of space. Every call blocks: call them from threads you own, never
/// from the Swift concurrency pool.
///
/// Errors are ``SystemError``s (function name and errno) so fault injection can return the
/// exact errno the kernel would.
public protocol FileSystem: Sendable {
    func open(_ path: String, _ mode: FileOpenMode) throws(SystemError) -> OpenFile
    func close(_ file: OpenFile)
    /// One `pread`: up to `buffer.count` bytes at `offset`; fewer only at the end of the file.
    func read(_ file: OpenFile, at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int
    /// One `pwrite` at `offset`; may write fewer bytes than given (``FileSystem/writeAll(_:at:_:)`` loops).
    func write(_ file: OpenFile, at offset: Int, from buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int
    /// `fdatasync`: the file's data (and the size needed to read it) reaches the disk.
    func syncData(_ file: OpenFile) throws(SystemError)
    /// `fsync`: data and metadata.
    func sync(_ file: OpenFile) throws(SystemError)
    func truncate(_ file: OpenFile, to size: Int) throws(SystemError)
    /// Reserves blocks for `[offset, offset + length)` so later writes there cannot hit ENOSPC;
    /// reads of the range return zeros until written.
    func allocate(_ file: OpenFile, offset: Int, length: Int) throws(SystemError)
    func size(of file: OpenFile) throws(SystemError) -> Int
    /// Size of the file at `path`, without opening it for the caller.
    func fileSize(atPath path: String) throws(SystemError) -> Int
    func rename(_ source: String, to destination: String) throws(SystemError)
    func unlink(_ path: String) throws(SystemError)
    /// Names (not paths) in a directory, without `.` and `..`, in no particular order.
    func listDirectory(_ path: String) throws(SystemError) -> [String]
    /// Creates one directory (mode 0700); `EEXIST` if it is there.
    func makeDirectory(_ path: String) throws(SystemError)
    /// fsync of a directory: makes creations, renames and removals in it durable.
    func syncDirectory(_ path: String) throws(SystemError)
    /// Bytes available to an unprivileged user on the file system holding `path` (statvfs).
    func freeBytes(_ path: String) throws(SystemError) -> Int
}
