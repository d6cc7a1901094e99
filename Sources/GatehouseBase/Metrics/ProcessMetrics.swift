#if canImport(Glibc)
import Glibc
#endif

/// The standard `process_*` metrics, read from `/proc` as Prometheus's own clients read them.
/// A figure the kernel does not give (no `/proc`) reads as 0.
public struct ProcessMetrics: Sendable {
    public var residentMemoryBytes: Double
    public var virtualMemoryBytes: Double
    /// User and system CPU time since the process started.
    public var cpuSeconds: Double
    public var openFileDescriptors: Double
    /// The soft `RLIMIT_NOFILE`: where accepting more connections starts to fail.
    public var maxFileDescriptors: Double
    /// When the process started, in seconds since the Unix epoch.
    public var startTimeSeconds: Double

    public init(residentMemoryBytes: Double, virtualMemoryBytes: Double, cpuSeconds: Double, openFileDescriptors: Double,
                maxFileDescriptors: Double, startTimeSeconds: Double)
    {
        self.residentMemoryBytes = residentMemoryBytes
        self.virtualMemoryBytes = virtualMemoryBytes
        self.cpuSeconds = cpuSeconds
        self.openFileDescriptors = openFileDescriptors
        self.maxFileDescriptors = maxFileDescriptors
        self.startTimeSeconds = startTimeSeconds
    }

    /// A few small reads of `/proc` and a directory listing: cheap enough for every scrape, but a
    /// blocking read all the same, so not for the concurrency pool.
    public static func read() -> ProcessMetrics {
        let pageBytes = Double(sysconf(Int32(_SC_PAGESIZE)))
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        // statm: size resident shared text lib data dt, in pages.
        let pages = fields(ofFile: "/proc/self/statm")
        let stat = ProcStat(fields(ofFile: "/proc/self/stat", after: UInt8(ascii: ")")))
        var start = 0.0
        if let bootSeconds = bootTimeSeconds(), let ticks = stat.startTicks, ticksPerSecond > 0 {
            start = bootSeconds + ticks / ticksPerSecond
        }
        return ProcessMetrics(
            residentMemoryBytes: (pages.count > 1 ? Double(pages[1]) ?? 0 : 0) * pageBytes,
            virtualMemoryBytes: (pages.first.flatMap(Double.init) ?? 0) * pageBytes,
            cpuSeconds: ticksPerSecond > 0 ? stat.cpuTicks / ticksPerSecond : 0,
            openFileDescriptors: Double(openDescriptorCount()),
            maxFileDescriptors: descriptorLimit(),
            startTimeSeconds: start
        )
    }

    /// The fields of `/proc/self/stat` this reads. The command name in parentheses may hold
    /// spaces and parentheses of its own, so fields are counted after its last `)`: the first
    /// there is field 3 (`state`) of proc(5).
    private struct ProcStat {
        var cpuTicks = 0.0
        var startTicks: Double?

        init(_ afterName: [Substring]) {
            func field(_ number: Int) -> Double? {
                let index = number - 3
                return index < afterName.count ? Double(afterName[index]) : nil
            }
            cpuTicks = (field(14) ?? 0) + (field(15) ?? 0)  // utime + stime
            startTicks = field(22)
        }
    }

    /// `btime` of `/proc/stat`: when the machine booted, in seconds since the epoch.
    private static func bootTimeSeconds() -> Double? {
        guard let text = contents(of: "/proc/stat") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst("btime ".count))
        }
        return nil
    }

    /// Entries of `/proc/self/fd` (the listing's own descriptor among them, as other clients count).
    private static func openDescriptorCount() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let isDots = withUnsafeBytes(of: entry.pointee.d_name) { name in
                name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
            }
            if !isDots { count += 1 }
        }
        return count
    }

    private static func descriptorLimit() -> Double {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        // RLIM_INFINITY is all ones, which Swift cannot import as an unsigned constant.
        return limit.rlim_cur == rlim_t.max ? .infinity : Double(limit.rlim_cur)
    }

    /// The space-separated fields of a one-line file, from after the last `after` byte if given.
    private static func fields(ofFile path: String, after: UInt8? = nil) -> [Substring] {
        guard let whole = contents(of: path) else { return [] }
        var text = whole[...]
        if let after, let last = text.utf8.lastIndex(of: after) { text = text[text.index(after: last)...] }
        return text.split(whereSeparator: { $0 == " " || $0 == "\n" })
    }

    /// A small file of `/proc`, whole (its size reads as 0, so it is read until the end).
    private static func contents(of path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
