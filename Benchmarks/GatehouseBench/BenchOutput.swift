#if canImport(Glibc)
import Glibc
#endif

/// Writes to stderr with one write(2), so lines from several threads never interleave.
func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

/// Debug builds are several times slower than release builds, so their figures must never
/// be mistaken for measurements.
func warnIfDebugBuild() {
    #if DEBUG
    printError("""
        ************************************************************************
        WARNING: gatehouse-bench is a DEBUG build. Its figures say nothing about
        Gatehouse's speed. Measure with: swift build -c release --product gatehouse-bench
        ************************************************************************
        """)
    #endif
}

/// `x` with one decimal (Foundation's `String(format:)` is not worth the import for this).
func decimal(_ value: Double) -> String {
    let tenths = Int64((value * 10).rounded())
    let sign = tenths < 0 ? "-" : ""
    return "\(sign)\(abs(tenths) / 10).\(abs(tenths) % 10)"
}
