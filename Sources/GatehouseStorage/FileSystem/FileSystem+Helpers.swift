public import GatehouseBase
#if canImport(Glibc)
import Glibc
#endif

extension FileSystem {
    /// Writes every byte, looping on short writes. A write that makes no progress is `EIO`.
    public func writeAll(_ file: OpenFile, at offset: Int, _ buffer: UnsafeRawBufferPointer) throws(SystemError) {
        var done = 0
        while done < buffer.count {
            let rest = UnsafeRawBufferPointer(rebasing: buffer[done...])
            let written = try write(file, at: offset + done, from: rest)
            guard written > 0 else { throw SystemError("pwrite", errno: EIO) }
            done += written
        }
    }

    public func writeAll(_ file: OpenFile, at offset: Int, _ bytes: [UInt8]) throws(SystemError) {
        try withRawBytes(bytes) { (raw) throws(SystemError) in try writeAll(file, at: offset, raw) }
    }

    /// Up to `count` bytes at `offset`: fewer only when the file ends first.
    public func read(_ file: OpenFile, at offset: Int, count: Int) throws(SystemError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        try withMutableRawBytes(&bytes) { (raw) throws(SystemError) in
            while done < count {
                let got = try read(file, at: offset + done, into: UnsafeMutableRawBufferPointer(rebasing: raw[done...]))
                if got == 0 { break }
                done += got
            }
        }
        bytes.removeLast(count - done)
        return bytes
    }

    /// The whole file.
    public func readFile(_ path: String) throws(SystemError) -> [UInt8] {
        let file = try open(path, .readOnly)
        defer { close(file) }
        return try read(file, at: 0, count: try size(of: file))
    }

    public func fileExists(_ path: String) -> Bool {
        (try? fileSize(atPath: path)) != nil
    }

    /// Creates the directory and any missing parents.
    public func makeDirectories(_ path: String) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            do {
                try makeDirectory(prefix)
            } catch where error.errno == EEXIST {
                // Already there.
            }
            prefix += "/"
        }
    }

    /// Creates the directory and any missing parents, fsyncing the parent of each one created,
    /// so the whole path survives a crash.
    public func makeDirectoriesDurably(_ path: String) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            let parent = prefix.isEmpty ? "." : (prefix == "/" ? "/" : String(prefix.dropLast()))
            prefix += component
            do {
                try makeDirectory(prefix)
                try syncDirectory(parent)
            } catch where error.errno == EEXIST {
                // Already there.
            }
            prefix += "/"
        }
    }

    /// Publishes `bytes` at `path` atomically: `<path>.tmp`, fsync, rename, fsync the directory.
    /// After a crash the file is either the old one or the new one, whole.
    public func writeFileAtomically(_ path: String, _ bytes: [UInt8]) throws(SystemError) {
        let temporary = path + ".tmp"
        let file = try open(temporary, .createOrTruncate)
        do {
            try writeAll(file, at: 0, bytes)
            try sync(file)
        } catch {
            close(file)
            try? unlink(temporary)
            throw error
        }
        close(file)
        try rename(temporary, to: path)
        try syncDirectory(directoryName(of: path))
    }

    /// Copies a file (for backups before a repair) and fsyncs the copy.
    public func copyFile(_ source: String, to destination: String) throws(SystemError) {
        let input = try open(source, .readOnly)
        defer { close(input) }
        let output = try open(destination, .createNew)
        defer { close(output) }
        let total = try size(of: input)
        var offset = 0
        let chunk = 1 << 20
        while offset < total {
            let bytes = try read(input, at: offset, count: min(chunk, total - offset))
            if bytes.isEmpty { break }
            try writeAll(output, at: offset, bytes)
            offset += bytes.count
        }
        try sync(output)
    }
}

/// The directory part of a path (`"."` when there is none).
func directoryName(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    if slash == path.startIndex { return "/" }
    return String(path[..<slash])
}

/// The last component of a path.
func baseName(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return path }
    return String(path[path.index(after: slash)...])
}

func joinPath(_ directory: String, _ name: String) -> String {
    directory.hasSuffix("/") ? directory + name : directory + "/" + name
}

/// Typed-throws friendly `withUnsafeBytes` (the standard one rethrows `any Error`).
@inline(__always)
func withRawBytes<R, E: Error>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
    let result: Result<R, E> = bytes.withUnsafeBytes { raw in
        do throws(E) { return .success(try body(raw)) } catch { return .failure(error) }
    }
    return try result.get()
}

@inline(__always)
func withMutableRawBytes<R, E: Error>(_ bytes: inout [UInt8], _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
    let result: Result<R, E> = bytes.withUnsafeMutableBytes { raw in
        do throws(E) { return .success(try body(raw)) } catch { return .failure(error) }
    }
    return try result.get()
}
