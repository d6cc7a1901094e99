#if canImport(Glibc)
import Glibc
#endif

/// Classifying answer lines without parsing them: the hot path must not measure our JSON parser.
enum AnswerLine {
    /// Pushed lines (`watch`) start with `{"push"` and answer no request.
    @inline(__always)
    static func isPush(_ line: UnsafeRawBufferPointer) -> Bool {
        let prefix: StaticString = #"{"push""#
        guard line.count >= prefix.utf8CodeUnitCount else { return false }
        return memcmp(line.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
    }

    /// Whether the answer is `"ok":false`. The server writes `ok` right after the `id` (and our
    /// ids are numbers), so the search stops within a few bytes; a line with no `ok` at all is
    /// not a valid answer and counts as an error too.
    @inline(__always)
    static func isError(_ line: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 5 < line.count {
            if line[index] == UInt8(ascii: "\""), line[index + 1] == UInt8(ascii: "o"), line[index + 2] == UInt8(ascii: "k"),
                line[index + 3] == UInt8(ascii: "\""), line[index + 4] == UInt8(ascii: ":")
            {
                return line[index + 5] == UInt8(ascii: "f")
            }
            index += 1
        }
        return true
    }
}
