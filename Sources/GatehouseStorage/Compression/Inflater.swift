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
        var failure: Failure?
        let output = [UInt8](unsafeUninitializedCapacity: rawLength) { output, count in
            do throws(Failure) {
                try decompress(input, into: output)
                count = rawLength
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return output
    }

    /// Inflates `input` straight into `output` (a snapshot chunk's place in the body: no array
    /// of its own, no copy), which it must fill exactly.
    func decompress(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<UInt8>) throws(Failure) {
        inflateReset(stream)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
        }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        stream.pointee.next_out = output.baseAddress
        stream.pointee.avail_out = uInt(output.count)
        var status = inflate(stream, Z_FINISH)
        var count = output.count - Int(stream.pointee.avail_out)
        if status != Z_STREAM_END, count == output.count {
            // Full, and not at the end: one spare byte tells a stream longer than declared from
            // one that stops short.
            var spare: UInt8 = 0
            withUnsafeMutablePointer(to: &spare) { spare in
                stream.pointee.next_out = spare
                stream.pointee.avail_out = 1
                status = inflate(stream, Z_FINISH)
                count += 1 - Int(stream.pointee.avail_out)
            }
        }
        let unread = Int(stream.pointee.avail_in)
        if status == Z_STREAM_END {
            if count != output.count { throw Failure(description: "inflates to \(count) bytes, declared \(output.count)") }
            if unread != 0 { throw Failure(description: "\(unread) bytes after the end of the deflate stream") }
        } else if count > output.count {
            throw Failure(description: "inflates past its declared \(output.count) bytes")
        } else {
            throw Failure(description: "not a complete deflate stream (zlib status \(status))")
        }
    }

    func decompress(_ input: [UInt8], rawLength: Int) throws(Failure) -> [UInt8] {
        try withRawBytes(input) { (raw) throws(Failure) in try decompress(raw, rawLength: rawLength) }
    }
}
