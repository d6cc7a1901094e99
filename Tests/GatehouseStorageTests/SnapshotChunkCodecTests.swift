import GatehouseBase
@testable import GatehouseStorage
import GatehouseTesting
import Testing

/// Which chunks of a snapshot are deflated: a part whose first chunk deflates to half its size
/// or less deflates every chunk; one whose first chunk shrinks less (mostly random bytes, like a
/// million profile ids) stores its other chunks without trying.
@Suite struct SnapshotChunkCodecs {
    static let header = SnapshotHeader(streamID: 1, lsn: 1, createdMs: 0)

    /// The codec byte of every chunk of an encoded file without metadata, in order.
    static func codecs(_ file: [UInt8]) -> [UInt8] {
        var offset = SnapshotFile.headerBytes
        var codecs: [UInt8] = []
        while offset < file.count - SnapshotFile.footerBytes {
            let stored = (0..<4).reduce(0) { $0 | Int(file[offset + $1]) << (8 * $1) }
            codecs.append(file[offset + 8])
            offset += SnapshotFile.chunkHeaderBytes + stored
        }
        return codecs
    }

    @Test func aPartThatBarelyDeflatesStoresItsOtherChunks() throws {
        // Random bytes of 32 values: deflate shrinks them, but to well over half.
        let random = SeededRandomSource(seed: 5).randomBytes(count: 3 * SnapshotFile.chunkBytes).map { $0 & 0x1F }
        let runs = [UInt8](repeating: 9, count: 2 * SnapshotFile.chunkBytes + 100)
        let file = SnapshotFile.encode(header: Self.header, parts: [random, runs])
        #expect(Self.codecs(file) == [1, 0, 0, 1, 1, 1])
        let (_, body) = try SnapshotFile.decode(file)
        #expect(body == random + runs)
        #expect(SnapshotFile.encode(header: Self.header, compressed: [random, runs].map(SnapshotFile.compress)) == file)
    }
}
