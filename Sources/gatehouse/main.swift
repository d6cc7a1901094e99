import GatehouseServer
#if canImport(Glibc)
import Glibc
#endif

// Everything worth testing lives in GatehouseServer; this only hands over the arguments and
// turns the answer into the exit code.
let status = await GatehouseCommand.main(Array(CommandLine.arguments.dropFirst()))
exit(status)
