#if canImport(Glibc)
import Glibc
#endif

// Parse and dispatch only; each mode lives in its own file.
let status: Int32
switch Result(catching: { () throws(BenchFailure) in try BenchArguments.parse(Array(CommandLine.arguments.dropFirst())) }) {
case .failure(let failure):
    printError("error: \(failure)")
    status = failure.exitCode
case .success(.help(let text)):
    print(text, terminator: "")
    status = BenchExitCode.success
case .success(.durability(let options)):
    status = await DurabilityMode.run(options)
case .success(.memory(let profiles, let notifications, let merges, let grants)):
    status = MemoryBench.run(profiles: profiles, notifications: notifications, merges: merges, grants: grants)
case .success(.restart(let options)):
    status = await RestartBench.run(options)
case .success(.outbox(let owed)):
    status = OutboxMemoryBench.run(owed: owed)
case .success(.retention(let options)):
    status = await RetentionBench.run(options)
case .success(.watch(let options)):
    status = await WatchBench.run(options)
case .success(.micro(let iterations)):
    status = await MicroMode.run(iterations: iterations)
case .success(.smoke):
    status = await SmokeRun.run()
case .success(.load(let options)):
    status = await LoadMode.run(options)
}
exit(status)
