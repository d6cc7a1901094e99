import CZlib

/// Inflates raw deflate into a buffer of exactly the declared size: output that would run past
/// it, stop short of it, or leave input unread is an error, so a damaged or hostile stream
/// (a "bomb") can never make us allocate more than its frame header declared.
final class Inflater {
    struct Failure: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    private let stream: UnsafeMutablePointer<z_stream>

    init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = czlib_inflate_init2(stream, -15)
        precondition(status == Z_OK, "inflateInit2 failed: \(status)")
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    func decompress(_ input: UnsafeRawBufferPointer, rawLength: Int) throws(Failure) -> [UInt8] {
        precondition(rawLength >= 0, "a raw length is never negative")
        inflateReset(stream)
        var failure: Failure?
        // One spare byte: inflating into it means the stream is longer than declared.
        let output = [UInt8](unsafeUninitializedCapacity: rawLength + 1) { output, count in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(input.count)
            stream.pointee.next_out = output.baseAddress
            stream.pointee.avail_out = uInt(rawLength + 1)
            let status = inflate(stream, Z_FINISH)
            count = rawLength + 1 - Int(stream.pointee.avail_out)
            let unread = Int(stream.pointee.avail_in)
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
            if status == Z_STREAM_END {
                if count != rawLength {
                    failure = Failure(description: "inflates to \(count) bytes, declared \(rawLength)")
                } else if unread != 0 {
                    failure = Failure(description: "\(unread) bytes after the end of the deflate stream")
                }
            } else if count > rawLength {
                failure = Failure(description: "inflates past its declared \(rawLength) bytes")
            } else {
                failure = Failure(description: "not a complete deflate stream (zlib status \(status))")
            }
            if failure != nil { count = 0 }
        }
        if let failure { throw failure }
        return output
    }

    func decompress(_ input: [UInt8], rawLength: Int) throws(Failure) -> [UInt8] {
        try withRawBytes(input) { (raw) throws(Failure) in try decompress(raw, rawLength: rawLength) }
    }
}
