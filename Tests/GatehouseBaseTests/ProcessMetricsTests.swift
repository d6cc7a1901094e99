import GatehouseBase
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The standard `process_*` figures, read from `/proc` for this test process.
@Suite struct ProcessFigures {
    @Test func memoryAndDescriptorFiguresArePlausible() {
        let metrics = ProcessMetrics.read()
        #expect(metrics.residentMemoryBytes > 0)
        #expect(metrics.virtualMemoryBytes >= metrics.residentMemoryBytes)
        #expect(metrics.openFileDescriptors >= 3, "standard input, output and error at least")
        #expect(metrics.maxFileDescriptors >= metrics.openFileDescriptors)
    }

    @Test func theStartTimeIsWithinTheLastDayAndNotAfterNow() {
        let start = ProcessMetrics.read().startTimeSeconds
        let now = Double(time(nil))
        // `btime` is whole seconds: the start may read up to a second late.
        #expect(start <= now + 1)
        #expect(start > now - 86_400)
    }

    @Test func openingAFileCountsOneDescriptorMore() {
        // Other tests of this process open and close descriptors meanwhile: one of the tries
        // sees nothing but its own file.
        var sawExactlyOne = false
        for _ in 0..<100 where !sawExactlyOne {
            let before = ProcessMetrics.read().openFileDescriptors
            let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
            let after = ProcessMetrics.read().openFileDescriptors
            close(descriptor)
            sawExactlyOne = descriptor >= 0 && after - before == 1
        }
        #expect(sawExactlyOne)
    }

    @Test func cpuTimeGrowsWhileTheProcessWorks() {
        let before = ProcessMetrics.read().cpuSeconds
        #expect(before >= 0)
        var state: UInt64 = 1
        var grew = false
        // A tick of CPU time (1/100 s) at most takes a few million rounds of this.
        for _ in 0..<10_000 where !grew {
            for _ in 0..<10_000 { state = state &* 6364136223846793005 &+ 1442695040888963407 }
            grew = ProcessMetrics.read().cpuSeconds > before
        }
        #expect(grew, "\(state)")
    }
}
