public import Foundation

/// Files a test puts in place itself (a damaged copy, a snapshot moved between servers), written
/// off the concurrency pool: Foundation's `Data.write(to:)` ends with an fsync.
public enum TestFiles {
    public static func write(_ bytes: Data, to path: String) async throws {
        try await offThePool { try bytes.write(to: URL(fileURLWithPath: path)) }
    }

    public static func copy(_ source: String, to destination: String) async throws {
        try await offThePool { try FileManager.default.copyItem(atPath: source, toPath: destination) }
    }
}
