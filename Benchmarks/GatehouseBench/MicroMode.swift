/// `gatehouse-bench micro`: runs ``MicroBenchmarks``, then ``ProjectTransactBench`` (it needs the
/// actor, so it is not one of them), and prints one line each.
enum MicroMode {
    static func run(iterations: Int) async -> Int32 {
        warnIfDebugBuild()
        if let failure = measure(iterations: iterations) { return failure }
        return await ProjectTransactBench.run(iterations: iterations)
    }

    /// Prints each result as it comes; answers the exit code of a failure, or nil.
    static func measure(iterations: Int) -> Int32? {
        for benchmark in MicroBenchmarks.all() {
            do {
                print(try MicroBenchmarks.measure(benchmark, iterations: iterations).line)
            } catch {
                printError("error: \(error)")
                return error.exitCode
            }
        }
        return nil
    }
}
