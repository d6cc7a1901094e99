import GatehouseBase

/// The snapshot file format (storage.md C.7; docs/data-format.md, "Snapshots"): a checksummed
/// header, the body in independently compressed and checksummed chunks of about 1 MiB, and a
/// footer that counts them. Written atomically; every byte is checked on read.
///
/// Both functions block on the file system: call them from a thread you own, never from the
/// Swift concurrency pool.
public enum SnapshotFile {
    static let magic: [UInt8] = Array("GHSNAPSH".utf8)
    static let footerMagic: [UInt8] = Array("GHSNAPEN".utf8)
    static let version: UInt16 = 1
    static let headerBytes = 64
    static let chunkHeaderBytes = 16
    static let footerBytes = 32
    /// zlib's memory level for chunks (see ``Deflater``).
    static let chunkMemoryLevel: Int32 = 9
    /// Raw bytes per chunk.
    public static let chunkBytes = 1 << 20
    /// Readers refuse chunks declaring more raw bytes than this.
    static let chunkBytesLimit = 16 << 20
    public static let metadataBytesMax = 64 << 10

    /// Writes `<path>.tmp`, fsyncs it, renames it to `path` and fsyncs the directory: after a
    /// crash `path` is the old file or the new one, whole. On failure the temporary file is
    /// removed and nothing else changes (a full disk aborts the snapshot, not the log).
    public static func write(path: String, header: SnapshotHeader, body: [UInt8], fileSystem: any FileSystem) throws -> SnapshotWriteResult {
        try write(path: path, header: header, parts: [body], fileSystem: fileSystem)
    }

    /// The same with the body given as `parts` laid end to end (a runtime's sections, encoded
    /// side by side), which are never copied into one array: each part is cut into chunks of its
    /// own, so a chunk ends where a part does. The file is the same format; only where chunks
    /// end differs from writing the joined body.
    public static func write(path: String, header: SnapshotHeader, parts: [[UInt8]], fileSystem: any FileSystem) throws -> SnapshotWriteResult {
        try write(path: path, header: header, bodyBytes: parts.reduce(0) { $0 + $1.count }, fileSystem: fileSystem) {
            encode(header: header, parts: parts)
        }
    }

    /// The same with each part already compressed (``compress(_:)``): a caller that makes the
    /// parts side by side compresses each as soon as it is made, so a core that is done making
    /// parts compresses while another still makes the costliest one.
    public static func write(path: String, header: SnapshotHeader, compressedParts: [CompressedPart],
                             fileSystem: any FileSystem) throws -> SnapshotWriteResult
    {
        try write(path: path, header: header, bodyBytes: compressedParts.reduce(0) { $0 + $1.raw.count }, fileSystem: fileSystem) {
            encode(header: header, compressed: compressedParts)
        }
    }

    private static func write(path: String, header: SnapshotHeader, bodyBytes: Int, fileSystem: any FileSystem,
                              _ encode: () -> [UInt8]) throws -> SnapshotWriteResult
    {
        guard header.metadata.count <= metadataBytesMax else {
            throw StorageError(.invalidArgument, "snapshot metadata of \(header.metadata.count) bytes exceeds \(metadataBytesMax)")
        }
        let bytes = encode()
        // The digest is taken while the file is written and synced: it reads memory, they wait on
        // the disk.
        let outcomes = Parallel.run([
            { () -> Result<String, SystemError> in
                Result { () throws(SystemError) in try fileSystem.writeFileAtomically(path, bytes) }.map { "" }
            },
            { .success(SHA256.hex(bytes)) },
        ])
        let digest: String
        do {
            _ = try outcomes[0].get()
            digest = try outcomes[1].get()
        } catch {
            throw StorageError(error, "cannot write snapshot \(path)")
        }
        return SnapshotWriteResult(path: path, bytes: bytes.count, bodyBytes: bodyBytes, sha256: digest)
    }

    /// Reads and verifies a snapshot: magic, version, header CRC, every chunk's CRC and lengths,
    /// the footer and its CRCs. Throws `corrupt` naming the problem and its offset,
    /// `unsupportedVersion`, or `notFound`. Never allocates more than the file's own sizes allow.
    public static func read(path: String, fileSystem: any FileSystem) throws -> (SnapshotHeader, [UInt8]) {
        let bytes: [UInt8]
        do {
            bytes = try fileSystem.readFile(path)
        } catch {
            throw StorageError(error, "cannot read snapshot \(path)")
        }
        do {
            return try decode(bytes)
        } catch {
            throw StorageError(error.code, "snapshot \(path): \(error.message)")
        }
    }

    static func encode(header: SnapshotHeader, body: [UInt8]) -> [UInt8] {
        encode(header: header, parts: [body])
    }

    /// One chunk as written: its 16-byte header (with its CRC) and its stored bytes (`nil`:
    /// stored as they are in the part).
    struct EncodedChunk: Sendable {
        var header: [UInt8]
        var deflated: [UInt8]?
        var rawCount: Int
    }

    /// A part of a body cut into chunks, each compressed and checksummed, ready to be laid out
    /// by ``write(path:header:compressedParts:fileSystem:)``.
    public struct CompressedPart: Sendable {
        let raw: [UInt8]
        let chunks: [EncodedChunk]

        /// The raw bytes of the part.
        public var count: Int { raw.count }
    }

    /// Compresses `part` chunk by chunk on the calling thread.
    public static func compress(_ part: [UInt8]) -> CompressedPart {
        guard !part.isEmpty else { return CompressedPart(raw: part, chunks: []) }
        let deflater = Deflater(memoryLevel: chunkMemoryLevel)
        let first = chunk(at: 0, of: part, deflater: deflater)
        let rest = stride(from: chunkBytes, to: part.count, by: chunkBytes).map { start in
            chunk(at: start, of: part, deflater: deflatesOn(after: first) ? deflater : nil)
        }
        return CompressedPart(raw: part, chunks: [first] + rest)
    }

    /// Compresses the chunks of every part side by side, then lays them out: each part's first
    /// chunk first, since it tells whether the rest of the part is worth deflating.
    static func encode(header: SnapshotHeader, parts: [[UInt8]]) -> [UInt8] {
        let firsts = Parallel.map(parts.count, makeContext: { Deflater(memoryLevel: chunkMemoryLevel) }) { deflater, part in
            parts[part].isEmpty ? nil : chunk(at: 0, of: parts[part], deflater: deflater)
        }
        let places = parts.indices.flatMap { part in
            stride(from: chunkBytes, to: parts[part].count, by: chunkBytes).map { (part: part, start: $0) }
        }
        let rest = Parallel.map(places.count, makeContext: { Deflater(memoryLevel: chunkMemoryLevel) }) { deflater, index in
            let (part, start) = places[index]
            let deflates = firsts[part].map(deflatesOn(after:)) ?? false
            return chunk(at: start, of: parts[part], deflater: deflates ? deflater : nil)
        }
        var compressed: [CompressedPart] = []
        var next = 0
        for (part, first) in zip(parts, firsts) {
            let count = max(0, (part.count + chunkBytes - 1) / chunkBytes - 1)
            compressed.append(CompressedPart(raw: part, chunks: (first.map { [$0] } ?? []) + rest[next..<next + count]))
            next += count
        }
        return encode(header: header, compressed: compressed)
    }

    /// Whether the chunks of a part after `first` are deflated: only when the first shrank to
    /// half its size or less. Bytes that are mostly random (a million profile ids and tokens)
    /// deflate at a third of the usual speed and shrink by a third at best; writing and hashing
    /// the bytes deflate would have saved costs less than deflating them.
    static func deflatesOn(after first: EncodedChunk) -> Bool {
        guard let deflated = first.deflated else { return false }
        return deflated.count * 2 <= first.rawCount
    }

    /// The chunk of `part` that starts at `start`, deflated unless `deflater` is `nil`.
    private static func chunk(at start: Int, of part: [UInt8], deflater: Deflater?) -> EncodedChunk {
        part.withUnsafeBytes { raw in
            encodeChunk(UnsafeRawBufferPointer(rebasing: raw[start..<min(start + chunkBytes, raw.count)]), deflater: deflater)
        }
    }

    /// The file: header, metadata, every part's chunks in order (an empty part has none), footer.
    static func encode(header: SnapshotHeader, compressed parts: [CompressedPart]) -> [UInt8] {
        let bodyCount = parts.reduce(0) { $0 + $1.raw.count }
        var total = headerBytes + header.metadata.count + footerBytes
        for part in parts {
            for (index, chunk) in part.chunks.enumerated() {
                total += chunkHeaderBytes + (chunk.deflated?.count ?? min(chunkBytes, part.raw.count - index * chunkBytes))
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(total)
        bytes.append(contentsOf: magic)
        bytes.appendLE16(version)
        bytes.append(1)  // codec: raw deflate per chunk (a chunk may still be stored)
        bytes.append(WALFormat.checksumCRC32C)
        bytes.appendLE32(UInt32(chunkBytes))
        bytes.appendLE64(header.streamID)
        bytes.appendLE64(header.lsn)
        bytes.appendLE64(UInt64(bitPattern: header.createdMs))
        bytes.appendLE64(UInt64(bodyCount))
        bytes.appendLE32(UInt32(header.metadata.count))
        bytes.append(contentsOf: [UInt8](repeating: 0, count: 8))
        let headerCRC = CRC32C.update(CRC32C.checksum(bytes), header.metadata)
        bytes.appendLE32(headerCRC)
        assert(bytes.count == headerBytes)
        bytes.append(contentsOf: header.metadata)

        var chunkCRCs: [UInt8] = []
        var chunkCount = 0
        for part in parts {
            chunkCount += part.chunks.count
            for (index, chunk) in part.chunks.enumerated() {
                bytes.append(contentsOf: chunk.header)
                if let deflated = chunk.deflated {
                    bytes.append(contentsOf: deflated)
                } else {
                    let start = index * chunkBytes
                    bytes.append(contentsOf: part.raw[start..<min(start + chunkBytes, part.raw.count)])
                }
                chunkCRCs.append(contentsOf: chunk.header[12..<16])
            }
        }
        var footer: [UInt8] = []
        footer.append(contentsOf: footerMagic)
        footer.appendLE32(UInt32(chunkCount))
        footer.appendLE32(0)
        footer.appendLE64(UInt64(bodyCount))
        footer.appendLE32(CRC32C.checksum(chunkCRCs))
        footer.appendLE32(CRC32C.checksum(footer))
        assert(footer.count == footerBytes)
        bytes.append(contentsOf: footer)
        assert(bytes.count == total)
        return bytes
    }

    /// Deflates one chunk's raw bytes (keeping them stored when that is not smaller, or when
    /// there is no `deflater`) and makes its header and checksum.
    private static func encodeChunk(_ raw: UnsafeRawBufferPointer, deflater: Deflater?) -> EncodedChunk {
        let deflated = deflater.map { $0.compress(raw) }.flatMap { $0.count < raw.count ? $0 : nil }
        var header: [UInt8] = []
        header.reserveCapacity(chunkHeaderBytes)
        header.appendLE32(UInt32(deflated?.count ?? raw.count))
        header.appendLE32(UInt32(raw.count))
        header.append(deflated == nil ? 0 : 1)
        header.append(contentsOf: [0, 0, 0])
        let crc = if let deflated { CRC32C.update(CRC32C.checksum(header), deflated) } else { CRC32C.update(CRC32C.checksum(header), raw) }
        header.appendLE32(crc)
        return EncodedChunk(header: header, deflated: deflated, rawCount: raw.count)
    }

    static func decode(_ bytes: [UInt8]) throws(StorageError) -> (SnapshotHeader, [UInt8]) {
        try withRawBytes(bytes) { (raw) throws(StorageError) in try decode(raw) }
    }

    private static func corrupt(_ offset: Int, _ problem: String) -> StorageError {
        StorageError(.corrupt, "\(problem) at offset \(offset)")
    }

    private static func decode(_ raw: UnsafeRawBufferPointer) throws(StorageError) -> (SnapshotHeader, [UInt8]) {
        let (header, bodyLength) = try decodeHeader(raw)
        let footer = try decodeFooter(raw, bodyLength: bodyLength, chunksStart: headerBytes + header.metadata.count)
        let body = try decodeChunks(raw, footer: footer, from: headerBytes + header.metadata.count)
        return (header, body)
    }

    private static func decodeHeader(_ raw: UnsafeRawBufferPointer) throws(StorageError) -> (SnapshotHeader, bodyLength: UInt64) {
        guard raw.count >= headerBytes + footerBytes else {
            throw corrupt(0, raw.isEmpty ? "the file is empty" : "the file is \(raw.count) bytes, too short for a snapshot")
        }
        guard Array(raw[0..<8]) == magic else { throw corrupt(0, "not a snapshot file (wrong magic)") }
        let version = raw.loadLE16(8)
        guard version == Self.version else {
            throw StorageError(.unsupportedVersion, "format version \(version) is not supported (this build reads version \(Self.version))")
        }
        let metadataCount = Int(raw.loadLE32(48))
        guard metadataCount <= metadataBytesMax, headerBytes + metadataCount + footerBytes <= raw.count else {
            throw corrupt(48, "metadata length \(metadataCount) does not fit the file")
        }
        let metadata = UnsafeRawBufferPointer(rebasing: raw[headerBytes..<headerBytes + metadataCount])
        let headerCRC = CRC32C.update(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<60])), metadata)
        guard headerCRC == raw.loadLE32(60) else { throw corrupt(60, "header checksum does not match") }
        guard raw[10] == 1, raw[11] == WALFormat.checksumCRC32C, raw.loadLE64(52) == 0 else {
            throw corrupt(10, "header has an unknown codec, checksum algorithm or reserved field")
        }
        let header = SnapshotHeader(
            streamID: raw.loadLE64(16), lsn: raw.loadLE64(24), createdMs: Int64(bitPattern: raw.loadLE64(32)), metadata: Array(metadata)
        )
        return (header, raw.loadLE64(40))
    }

    private struct Footer {
        var start: Int
        var chunkCount: Int
        var bodyLength: Int
        var chunksCRC: UInt32
    }

    /// Checks the footer and that its declared sizes fit the file, before anything is allocated.
    private static func decodeFooter(_ raw: UnsafeRawBufferPointer, bodyLength: UInt64, chunksStart: Int) throws(StorageError) -> Footer {
        let start = raw.count - footerBytes
        guard Array(raw[start..<start + 8]) == footerMagic else {
            throw corrupt(start, "footer is missing (the file is truncated or has trailing bytes)")
        }
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[start..<start + 28])) == raw.loadLE32(start + 28) else {
            throw corrupt(start + 28, "footer checksum does not match")
        }
        let chunkCount = Int(raw.loadLE32(start + 8))
        let totalRaw = raw.loadLE64(start + 16)
        guard raw.loadLE32(start + 12) == 0, totalRaw == bodyLength else {
            throw corrupt(start + 16, "footer body length \(totalRaw) does not match the header's \(bodyLength)")
        }
        // Deflate cannot expand more than 1032:1, and every chunk takes 16 bytes: a body
        // declared larger than the file could hold is refused before anything is allocated.
        let chunkArea = start - chunksStart
        guard chunkCount <= chunkArea / chunkHeaderBytes, bodyLength <= UInt64(chunkArea) * 1032 else {
            throw corrupt(start + 8, "footer declares \(chunkCount) chunks and \(bodyLength) bytes, more than \(chunkArea) bytes of chunks can hold")
        }
        return Footer(start: start, chunkCount: chunkCount, bodyLength: Int(bodyLength), chunksCRC: raw.loadLE32(start + 24))
    }

    /// Where one chunk is, as its header declares.
    private struct ChunkPlace {
        var offset: Int
        var stored: Int
        var rawLength: Int
        var bodyOffset: Int
    }

    private static func decodeChunks(_ raw: UnsafeRawBufferPointer, footer: Footer, from chunksStart: Int) throws(StorageError) -> [UInt8] {
        // First, in order: where each chunk is and the sizes it declares (cheap, and a damaged
        // length stops the walk). The first damage found here is reported unless an earlier
        // chunk turns out damaged in the second pass: the first damage in file order wins.
        var places: [ChunkPlace] = []
        places.reserveCapacity(footer.chunkCount)
        var walkDamage: StorageError?
        var offset = chunksStart
        var bodyCount = 0
        for index in 0..<footer.chunkCount {
            guard footer.start - offset >= chunkHeaderBytes else {
                walkDamage = corrupt(offset, "chunk \(index) of \(footer.chunkCount) is missing")
                break
            }
            let stored = Int(raw.loadLE32(offset))
            let rawLength = Int(raw.loadLE32(offset + 4))
            let dataStart = offset + chunkHeaderBytes
            guard stored <= footer.start - dataStart else {
                walkDamage = corrupt(offset, "chunk \(index) declares \(stored) bytes, past the footer")
                break
            }
            guard rawLength <= chunkBytesLimit, bodyCount + rawLength <= footer.bodyLength else {
                walkDamage = corrupt(offset + 4, "chunk \(index) declares \(rawLength) raw bytes, more than the body has left")
                break
            }
            places.append(ChunkPlace(offset: offset, stored: stored, rawLength: rawLength, bodyOffset: bodyCount))
            bodyCount += rawLength
            offset = dataStart + stored
        }
        // Then side by side: each chunk's checksum and contents, inflated into its place.
        var damage: StorageError?
        let body = [UInt8](unsafeUninitializedCapacity: bodyCount) { output, count in
            let target = output
            let outcomes = Parallel.map(places.count, makeContext: { Inflater() }) { [places] inflater, index in
                decodeChunk(raw, places[index], index: index, into: target, inflater: inflater)
            }
            damage = outcomes.first { $0 != nil } ?? nil
            count = damage == nil && walkDamage == nil ? bodyCount : 0
        }
        if let damage { throw damage }
        if let walkDamage { throw walkDamage }
        guard offset == footer.start else { throw corrupt(offset, "\(footer.start - offset) unexpected bytes before the footer") }
        guard body.count == footer.bodyLength else { throw corrupt(footer.start, "chunks hold \(body.count) bytes, the footer says \(footer.bodyLength)") }
        var chunkCRCs: [UInt8] = []
        chunkCRCs.reserveCapacity(places.count * 4)
        for place in places { chunkCRCs.appendLE32(raw.loadLE32(place.offset + 12)) }
        guard CRC32C.checksum(chunkCRCs) == footer.chunksCRC else {
            throw corrupt(footer.start + 24, "footer's checksum of the chunk checksums does not match")
        }
        return body
    }

    /// Checks one chunk and writes its raw bytes at its place in `output`; answers the damage.
    private static func decodeChunk(
        _ raw: UnsafeRawBufferPointer, _ place: ChunkPlace, index: Int, into output: UnsafeMutableBufferPointer<UInt8>,
        inflater: Inflater
    ) -> StorageError? {
        let offset = place.offset
        let dataStart = offset + chunkHeaderBytes
        let data = UnsafeRawBufferPointer(rebasing: raw[dataStart..<dataStart + place.stored])
        let crc = CRC32C.update(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[offset..<offset + 12])), data)
        guard crc == raw.loadLE32(offset + 12) else { return corrupt(offset, "chunk \(index) checksum does not match") }
        guard raw[offset + 9] == 0, raw[offset + 10] == 0, raw[offset + 11] == 0 else {
            return corrupt(offset + 9, "chunk \(index) reserved bytes are not zero")
        }
        let target = UnsafeMutableBufferPointer(rebasing: output[place.bodyOffset..<place.bodyOffset + place.rawLength])
        switch raw[offset + 8] {
        case 0:
            guard place.stored == place.rawLength else { return corrupt(offset, "stored chunk \(index) has different raw and stored lengths") }
            _ = target.initialize(from: data)
        case 1:
            do {
                try inflater.decompress(data, into: target)
            } catch {
                return corrupt(dataStart, "chunk \(index) does not inflate: \(error)")
            }
        default:
            return corrupt(offset + 8, "chunk \(index) has unknown codec \(raw[offset + 8])")
        }
        return nil
    }
}

