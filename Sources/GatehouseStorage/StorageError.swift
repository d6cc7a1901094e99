import GatehouseBase
#if canImport(Glibc)
import Glibc
#endif

/// Everything the storage layer throws: a stable code and a message for the operator.
public struct StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// The disk is (nearly) full; nothing was written or queued. Clears itself when space returns.
        case readOnly = "read_only"
        /// The log failed earlier (a write or sync error) and is stopped: nothing more is accepted.
        case failed
        /// Damage that is not a torn tail; the message names the file, the offset and what to run.
        case corrupt
        /// A torn tail found while `allowTornTail` is off.
        case tornTail = "torn_tail"
        /// A file-system call failed.
        case io
        /// One append is larger than `frameBytesMax`.
        case recordTooLarge = "record_too_large"
        /// A file written by a newer (or unknown) format version.
        case unsupportedVersion = "unsupported_version"
        /// The file or directory does not exist.
        case notFound = "not_found"
        /// More than `pendingBytesMax` is waiting for the disk; retry shortly (the runtime answers `overloaded`).
        case busy
        /// The log was closed; appends are refused.
        case closed
        /// Options or arguments the storage layer cannot work with.
        case invalidArgument = "invalid_argument"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

extension StorageError {
    /// Maps a failed system call: a missing file is `notFound`, a full disk `readOnly`, the rest `io`.
    init(_ error: SystemError, _ context: String) {
        switch error.errno {
        case ENOENT: self.init(.notFound, "\(context): \(error)")
        case ENOSPC, EDQUOT: self.init(.readOnly, "\(context): \(error)")
        default: self.init(.io, "\(context): \(error)")
        }
    }
}
