import CZlib

/// Raw deflate (no zlib header or Adler-32: every frame and chunk carries a CRC32C already),
/// reset before each input so every output decodes on its own. Not thread-safe: one per thread.
final class Deflater {
    private let stream: UnsafeMutablePointer<z_stream>

    /// `memoryLevel` sizes zlib's match-finding hash (2^(level + 7) entries, cleared by every
    /// reset): 8, zlib's default, suits the log's small frames; 9 deflates the 1 MiB chunks of a
    /// snapshot about 10 % faster (and a little smaller).
    init(level: Int32 = 1, memoryLevel: Int32 = 8) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = czlib_deflate_init2(stream, level, -15, memoryLevel, Z_DEFAULT_STRATEGY)
        // Only an allocation failure inside zlib gets here.
        precondition(status == Z_OK, "deflateInit2 failed: \(status)")
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// The compressed form of `input`, one complete raw-deflate stream.
    func compress(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        deflateReset(stream)
        let bound = Int(deflateBound(stream, uLong(input.count)))
        return [UInt8](unsafeUninitializedCapacity: max(bound, 1)) { output, count in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(input.count)
            stream.pointee.next_out = output.baseAddress
            stream.pointee.avail_out = uInt(output.count)
            let status = deflate(stream, Z_FINISH)
            // deflateBound guarantees room for the whole stream in one call.
            precondition(status == Z_STREAM_END, "deflate did not finish: \(status)")
            count = output.count - Int(stream.pointee.avail_out)
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
        }
    }

    func compress(_ input: [UInt8]) -> [UInt8] {
        input.withUnsafeBytes { compress($0) }
    }
}
