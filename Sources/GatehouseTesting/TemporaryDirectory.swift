import Foundation

/// A fresh directory under the system's temporary directory, removed by ``remove()``.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(prefix: String = "gatehouse-test") throws {
        var template = Array((NSTemporaryDirectory() + "/\(prefix)-XXXXXX").utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard created != nil else { throw CocoaError(.fileWriteUnknown) }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    public func appending(_ component: String) -> String {
        path + "/" + component
    }
}

/// Runs `body` with a fresh temporary directory and removes it afterwards, also when `body`
/// throws. Making and removing it touch the disk, so they run off the concurrency pool.
public func withTemporaryDirectory<T>(prefix: String = "gatehouse-test", _ body: (TemporaryDirectory) async throws -> T)
    async throws -> T
{
    let directory = try await offThePool { try TemporaryDirectory(prefix: prefix) }
    do {
        let result = try await body(directory)
        await offThePool { directory.remove() }
        return result
    } catch {
        await offThePool { directory.remove() }
        throw error
    }
}
