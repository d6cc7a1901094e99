import Foundation
import GatehouseBase
#if canImport(Glibc)
import Glibc
#endif

/// Temporary directories on a real disk for the in-process server and the storage measurements.
enum ScratchDirectory {
    /// Creates `<parent>/gatehouse-bench-XXXXXX`; `parent` nil: `$TMPDIR`, else `/tmp`.
    static func make(in parent: String?) throws(BenchFailure) -> String {
        let parent = parent ?? NSTemporaryDirectory()
        var template = Array((parent + "/gatehouse-bench-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw BenchFailure("cannot create a directory under \(parent): \(SystemError("mkdtemp", errno: errno))")
        }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}
