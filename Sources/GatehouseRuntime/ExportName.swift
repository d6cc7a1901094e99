import GatehouseCore

/// The name of a file in the exports directory, as `tenant.snapshot` and `tenant.restore` take
/// it (PROTOCOL.md, "Operators"). Only a name, never a path: an operator's op must not be able
/// to write over the data directory's `MANIFEST` or `wal/`, nor ask whether a file exists
/// anywhere else on the server.
struct ExportName: Sendable, Equatable, CustomStringConvertible {
    /// What the atomic write appends to name the temporary file it renames into place.
    static let temporarySuffix = ".tmp"
    /// The longest name in bytes: the file system's 255 less that suffix, so the temporary
    /// file's name fits too.
    static let bytesMax = 255 - temporarySuffix.utf8.count

    let rawValue: String

    /// Checks `name` as a client gave it; a refusal is `bad_request` naming `field`.
    init(validating name: String, field: String = "path") throws(GatehouseError) {
        if let problem = Self.problem(with: name) { throw .badField(field, problem) }
        rawValue = name
    }

    private init(unchecked name: String) {
        rawValue = name
    }

    /// `<project>-<cursor>.snap`: a project id has no `/`, no `.` and no control character.
    static func standard(project: ProjectID, cursor: UInt64) -> ExportName {
        ExportName(unchecked: "\(project.rawValue)-\(cursor).snap")
    }

    var description: String { rawValue }

    private static func problem(with name: String) -> String? {
        if name.isEmpty { return "must not be empty" }
        if name.utf8.count > bytesMax { return "must be at most \(bytesMax) bytes" }
        if name.hasPrefix("/") { return "must be a file name inside the exports directory, not an absolute path" }
        if name.contains("/") { return "must be a file name inside the exports directory, without '/'" }
        if name == "." || name.contains("..") { return "must not be '.' or contain '..'" }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "must not contain NUL or other control characters"
        }
        // A name the server would give its own unfinished file: a restore could read one half
        // written, and an operator sweeping `*.tmp` would delete a finished export.
        if name.hasSuffix(temporarySuffix) { return "must not end in '\(temporarySuffix)'" }
        return nil
    }
}
