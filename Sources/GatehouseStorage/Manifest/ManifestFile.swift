import GatehouseBase

/// `<data-dir>/MANIFEST` (docs/data-format.md, "Manifest"): magic, version, length, a
/// ByteWriter-encoded body and a CRC32C over everything before it. Replaced atomically.
/// Both functions block on the file system.
public enum ManifestFile {
    public static let fileName = "MANIFEST"
    static let magic: [UInt8] = Array("GHMANIFS".utf8)
    static let version: UInt16 = 1
    static let prefixBytes = 16
    static let bytesMax = 64 << 20

    /// The manifest in `directory`, or nil when there is none. Damage throws `corrupt`: never
    /// guess which part of the log is live.
    public static func read(directory: String, fileSystem: any FileSystem) throws -> Manifest? {
        let path = joinPath(directory, fileName)
        let bytes: [UInt8]
        do {
            bytes = try fileSystem.readFile(path)
        } catch {
            let mapped = StorageError(error, "cannot read \(path)")
            if mapped.code == .notFound { return nil }
            throw mapped
        }
        do {
            return try decode(bytes)
        } catch {
            throw StorageError(error.code, "\(path): \(error.message)")
        }
    }

    /// Writes `MANIFEST.tmp`, fsyncs it, renames it over `MANIFEST` and fsyncs the directory.
    public static func write(_ manifest: Manifest, directory: String, fileSystem: any FileSystem) throws {
        for entry in manifest.snapshots where !isPlainFileName(entry.file) {
            throw StorageError(.invalidArgument, "manifest entry file \"\(entry.file)\" must be a plain file name")
        }
        let path = joinPath(directory, fileName)
        do {
            try fileSystem.writeFileAtomically(path, encode(manifest))
        } catch {
            throw StorageError(error, "cannot write \(path)")
        }
    }

    static func encode(_ manifest: Manifest) -> [UInt8] {
        var body = ByteWriter()
        body.writeOptional(manifest.databaseID) { writer, id in writer.writeRaw(id.bytes) }
        body.writeVarUInt(manifest.replayFromLSN)
        body.writeArray(manifest.snapshots) { writer, entry in
            writer.writeVarUInt(entry.streamID)
            writer.writeString(entry.file)
            writer.writeVarUInt(entry.lsn)
        }
        body.writeBytes(manifest.runtimeMetadata)
        var bytes = magic
        bytes.appendLE16(version)
        bytes.appendLE16(0)
        bytes.appendLE32(UInt32(body.count))
        bytes.append(contentsOf: body.bytes)
        bytes.appendLE32(CRC32C.checksum(bytes))
        return bytes
    }

    static func decode(_ bytes: [UInt8]) throws(StorageError) -> Manifest {
        guard bytes.count >= prefixBytes + 4, bytes.count <= bytesMax else {
            throw StorageError(.corrupt, "the manifest is \(bytes.count) bytes, not a plausible size")
        }
        guard Array(bytes[0..<8]) == magic else { throw StorageError(.corrupt, "not a manifest (wrong magic) at offset 0") }
        let (version, reserved, length, stored) = bytes.withUnsafeBytes { raw in
            (raw.loadLE16(8), raw.loadLE16(10), Int(raw.loadLE32(12)), raw.loadLE32(bytes.count - 4))
        }
        guard version == Self.version else {
            throw StorageError(.unsupportedVersion, "manifest format version \(version) is not supported (this build reads version \(Self.version))")
        }
        guard reserved == 0, length == bytes.count - prefixBytes - 4 else {
            throw StorageError(.corrupt, "manifest length field says \(length) bytes, the file holds \(bytes.count - prefixBytes - 4) at offset 12")
        }
        guard CRC32C.checksum(bytes[..<(bytes.count - 4)]) == stored else {
            throw StorageError(.corrupt, "manifest checksum does not match at offset \(bytes.count - 4)")
        }
        var reader = ByteReader(bytes[prefixBytes..<(bytes.count - 4)])
        do throws(ByteReaderError) {
            let databaseID = try reader.readOptional { (reader) throws(ByteReaderError) in
                DatabaseID(unchecked: try reader.readRaw(DatabaseID.byteCount))
            }
            let replayFrom = try reader.readVarUInt()
            let snapshots = try reader.readArray { (reader) throws(ByteReaderError) in
                ManifestEntry(streamID: try reader.readVarUInt(), file: try reader.readString(), lsn: try reader.readVarUInt())
            }
            let metadata = try reader.readBytes()
            try reader.expectEnd()
            for entry in snapshots where !isPlainFileName(entry.file) {
                throw ByteReaderError.invalid("snapshot file name \"\(entry.file)\"", at: 0)
            }
            return Manifest(databaseID: databaseID, replayFromLSN: replayFrom, snapshots: snapshots, runtimeMetadata: metadata)
        } catch {
            throw StorageError(.corrupt, "manifest body is malformed: \(error) (body offset)")
        }
    }

    static func isPlainFileName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.utf8.contains(0)
    }
}
