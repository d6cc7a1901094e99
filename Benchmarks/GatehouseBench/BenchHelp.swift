import GatehouseServer

/// The option tables and `--help` texts of every mode.
extension BenchArguments {
    static let loadParser = ArgumentParser(
        command: "gatehouse-bench",
        summary: loadSummary,
        options: [
            .value("connect", placeholder: "HOST:PORT", help: "use a running server instead of one in this process"),
            .value("key", placeholder: "KEY", help: "that server's admin key (default: $GATEHOUSE_ADMIN_KEY)"),
            .value("http-connect", placeholder: "HOST:PORT", help: "with --connect: that server's HTTP listener (--http), for the http. ops"),
            .value("op", placeholder: "OP", help: "what to measure (default ping; see ops above)"),
            .value("connections", placeholder: "N", help: "connections (default 50, at most 10000)"),
            .value("pipeline", placeholder: "P", help: "requests in flight per connection (default 1, at most 1024)"),
            .value("duration", placeholder: "SECONDS", help: "how long to measure (default 5; fractions allowed)"),
            .value("warmup", placeholder: "SECONDS", help: "load before measuring, not counted (default 1)"),
            .value("threads", placeholder: "N", help: "generator threads sharing the connections (default 1, as lineload)"),
            .value("fsync", placeholder: "POLICY", help: "in-process server: always (default), everysec or none"),
            .value("io-threads", placeholder: "N", help: "in-process server: event-loop threads (default: the server's)"),
            .value("data-dir", placeholder: "DIR", help: "in-process server: make its temporary data directory here (default $TMPDIR or /tmp; a tmpfs makes fsync free)"),
            .flag("setup-only", help: "with --connect: create the project, print its keys and lineload arguments, stop"),
            .flag("json", help: "also print one JSON object on stdout (the human line goes to stderr)"),
            .flag("smoke", help: "the CI check: every mode briefly, in-process (no other options)"),
        ]
    )

    static let memoryParser = ArgumentParser(
        command: "gatehouse-bench memory",
        summary: """
            Builds one project's state with N identified profiles (each with a customer user id and a
            token) through the real identity rules, and prints the resident memory they take, the time
            to create them, and the size and encode/decode time of the project's snapshot body.
            Then, while a copy of the state is held as a snapshot's capture holds one, times the
            next writes: two subscription renewals (and, with --notifications, two store
            notifications), each first write paying for whatever the copy makes it duplicate.
            With --notifications=M the state also remembers M store notifications (as a project
            does for 30 days), and their memory is shown on its own. With --merges=K, K anonymous
            profiles are made and merged into the identified ones (a user signing in on another
            device), shown on their own too, with the first two merges after a capture timed.
            With --grants=G, the first G profiles get a promotional grant each (a campaign),
            likewise.
            Build with -c release.
            """,
        options: [
            .value("profiles", placeholder: "N", help: "how many profiles (default 1000000)"),
            .value("notifications", placeholder: "M", help: "store notifications remembered (default 0)"),
            .value("merges", placeholder: "K", help: "anonymous profiles merged into identified ones (default 0)"),
            .value("grants", placeholder: "G", help: "profiles given a promotional grant (default 0, at most N)"),
        ]
    )

    static let outboxParser = ArgumentParser(
        command: "gatehouse-bench outbox",
        summary: """
            What a webhook that is down costs in memory: N currency.transact credits without a
            webhook, then N with one nothing answers, each of them owed; prints the resident bytes
            a write adds either way. Build with -c release.
            """,
        options: [.value("owed", placeholder: "N", help: "writes of each kind (default 1000000)")]
    )

    static let retentionParser = ArgumentParser(
        command: "gatehouse-bench retention",
        summary: """
            Writes per second while a project's time-bounded tables fill, and once they are full
            and forget as much as they take: a steady flow of currency.transact credits through
            the project's actor (fsync none, no snapshots) on a clock moved a step before each,
            so the first W writes span the feed's 7 days (the idempotency keys' 24 hours and each
            profile's 1,000 history entries fill on the way), and the next W run on full tables.
            Prints both rates and resident memory after each; fails if a balance or what a table
            holds at the end is wrong. Build with -c release.
            """,
        options: [
            .value("writes", placeholder: "W", help: "writes in one feed window (default 604800: one a second)"),
            .value("profiles", placeholder: "N", help: "profiles credited in turn (default 100)"),
        ]
    )

    static let restartParser = ArgumentParser(
        command: "gatehouse-bench restart",
        summary: """
            Measures DESIGN.md's restart goals on the real engine, in a scratch data
            directory under --data-dir that is deleted at the end:
              build     one project with N identified profiles, each buying a
                        subscription, through the project actor (W tasks, each
                        write waiting to be durable, so group commit shares
                        frames)
              snapshot  a checkpoint of it, timed: body and file size, and the
                        file read back and decoded alone
              append    M currency.transact credits after the snapshot
              restart   the engine closed, then a fresh Engine.open timed:
                        snapshot load, replay of the M records, the start-up
                        expiry pass, each phase shown; resident memory after
            Automatic snapshots are off, so the restart replays all M records.
            Build with -c release: a debug build's figures mean nothing.
            Exit codes: 0 ok, 1 a phase failed or the restarted state differs, 2 usage.
            """,
        options: [
            .value("profiles", placeholder: "N", help: "profiles, each with a subscription (default 1000000)"),
            .value("records", placeholder: "M", help: "log records appended after the snapshot (default 5000000)"),
            .value("fsync", placeholder: "POLICY", help: "the log's policy: none (default), everysec or always"),
            .value("writers", placeholder: "W", help: "tasks driving the project actor, one write in flight each (default 16)"),
            .value("data-dir", placeholder: "DIR", help: "where the scratch directory goes (default $TMPDIR or /tmp)"),
        ]
    )

    static let watchParser = ArgumentParser(
        command: "gatehouse-bench watch",
        summary: """
            Measures pushes (DESIGN.md: with 10,000 connections holding a watch, a
            change reaches its watcher within 10 ms). Creates a project bench-<random>
            (as the load mode does) and N profiles; opens N connections, each saying
            hello with the public key and watching a profile of its own; then one
            driver connection (secret key) makes M changes, currency.transact +1 COINS
            to a random watched profile, keeping --in-flight of them unfinished
            (answer or push outstanding), never two on one profile. One generator
            thread (epoll) reads every connection and times each change from its
            send(2) at the driver to its push's read at the watcher (what an app
            sees, the fsync included), and compares the push with the change's
            answer (a push may beat its answer: each goes out once the change is
            durable). Prints p50/p90/p99/max in microseconds, pushes received
            against expected, and the server's resident memory with the profiles
            alone and with N connections watching.

            Without --connect the server runs in a child process of the bench (the
            in-process server of the load mode, production defaults, its connection
            limit raised to N + 16): each end of a connection takes a descriptor,
            and one process holding both ends of 10,000 connections would need
            20,000. Its memory is read from /proc/<pid>/statm. With --connect the
            server must allow N + 16 connections (--max-connections) and its memory
            is not shown. The bench raises its descriptor limit to the hard limit
            (ulimit -Hn) and needs about N + 32. The server closes connections idle
            for 5 minutes, watchers included: keep a run shorter than that.
            Build with -c release: a debug build's figures mean nothing.
            Exit codes: 0 ok, 1 failure (a change failed, a push missing or
            unexpected, a watcher closed), 2 usage.
            """,
        options: [
            .value("connections", placeholder: "N", help: "watching connections (default 10000)"),
            .value("changes", placeholder: "M", help: "changes made (default 2000)"),
            .value("in-flight", placeholder: "K", help: "changes unfinished at once (default 1)"),
            .value("connect", placeholder: "HOST:PORT", help: "use a running server instead of the bench's own"),
            .value("key", placeholder: "KEY", help: "that server's admin key (default: $GATEHOUSE_ADMIN_KEY)"),
            .value("fsync", placeholder: "POLICY", help: "own server: always (default), everysec or none"),
            .value("io-threads", placeholder: "N", help: "own server: event-loop threads (default: the server's)"),
            .value("data-dir", placeholder: "DIR", help: "own server: make its temporary data directory here"),
            .flag("serve-child", help: "internal: be the bench's server process (prints its address, serves until stdin closes)"),
        ]
    )

    static let microParser = ArgumentParser(
        command: "gatehouse-bench micro",
        summary: """
            Measures the wire layer in this process, without sockets: parsing a typical
            100-byte request with JSONParser.parse and with Request(line:), writing an
            answer with Answer.success, LineFramer splitting 1,000 lines read in 64 KiB
            chunks, and the fast roads' readers: SyncScan on four shapes of sync (with and
            without an id, in another order, with escapes) and TransactScan. Prints the median ns per op of five rounds after a warm-up, and the
            best round. Each result is checked, so a broken parser fails the run (exit 1).
            Build with -c release: a debug build's figures mean nothing.
            """,
        options: [
            .value("iterations", placeholder: "N", help: "operations per measurement (default 200000; the framer does N/100 batches)"),
        ]
    )

    static let durabilityParser = ArgumentParser(
        command: "gatehouse-bench durability",
        summary: """
            Measures durability on a real disk, in temporary directories under
            --data-dir (default $TMPDIR or /tmp) that are deleted at the end:
              server    durable writes (config.put) through an in-process server,
                        pipeline 1, per policy and client count: writes/s,
                        p50/p99 latency, and the fsyncs and frames the server's
                        log made over the same window (server.stats)
              log       the write-ahead log alone: threads append ~100-byte
                        records, each waiting for its record to be durable
                        before the next: records/s, latency, records per sync
              replay    N records written in frames of 50, then
                        WriteAheadLog.open timed while it checks and replays
                        them: records/s and MB/s
              snapshot  SnapshotFile write and read-back of an M MiB body: MB/s
                        each way, and the file's size after compression
            Each point runs --warmup, then --duration seconds. Build with -c
            release: a debug build's figures mean nothing.
            Exit codes: 0 ok, 1 a part failed, 2 usage.
            """,
        options: [
            .value("parts", placeholder: "LIST", help: "which parts, comma-separated (default server,log,replay,snapshot)"),
            .value("policies", placeholder: "LIST", help: "fsync policies for server and log (default always,everysec; none allowed)"),
            .value("clients", placeholder: "LIST", help: "clients (server) and threads (log) (default 1,10,50)"),
            .value("duration", placeholder: "SECONDS", help: "measured time per point (default 5)"),
            .value("warmup", placeholder: "SECONDS", help: "load before each point, not counted (default 1)"),
            .value("records", placeholder: "N", help: "records written and replayed (default 1000000)"),
            .value("snapshot-mib", placeholder: "M", help: "snapshot body in MiB (default 256)"),
            .value("data-dir", placeholder: "DIR", help: "where the temporary directories go (a tmpfs makes fsync free)"),
            .value("io-threads", placeholder: "N", help: "in-process server: event-loop threads (default: the server's)"),
        ]
    )

    private static var loadSummary: String {
        let width = BenchOp.all.map(\.name.count).max() ?? 0
        let ops = BenchOp.all.map { op in
            let name = op.name + String(repeating: " ", count: width - op.name.count)
            let key = op.sendsKey ? "[\(op.key.rawValue) key]" : "[no key]"
            return "  \(name)  \(key) \(op.about)"
        }
        return """
            Measures a Gatehouse server with a closed loop, like bench/lineload.c: each of N
            connections keeps P requests in flight and sends the next one as each answer
            arrives. Latency is from a request's write to its answer's read. Like lineload,
            one generator thread serves every connection with epoll (--threads for more).

            Without --connect it starts a server in this process (127.0.0.1, a free port, a
            temporary data directory, --fsync); load and server then share the machine's
            cores, so figures are indicative. With --connect it uses a running server, and
            --key must be that server's admin key. Either way it creates a project
            bench-<random> (config: entitlement pro, subscription pro_monthly granting it,
            currency COINS, a default offering, the test store), says hello on every
            connection with the key the op needs, and deletes the project at the end.

            The http. ops run their setup the same way, over the line, then open their
            connections to the server's HTTP listener instead (the in-process server's own;
            with --connect, --http-connect HOST:PORT) and pipeline HTTP/1.1 requests there,
            the key as Authorization: Bearer. An answer with a status of 400 or more is an
            error.

            ops:
            \(ops.joined(separator: "\n"))

            Prints one line: requests, requests/s, latency p50 p90 p99 p99.9 max in
            microseconds, and errors (answers with "ok":false, HTTP statuses of 400 or
            more). Answers during the warm-up
            are not counted, but an error answer then still fails the run.

            other modes:
              gatehouse-bench micro [--iterations N]   ns/op of parsing, scanning, answering, framing
              gatehouse-bench durability [options]     durable writes, the log alone, replay,
                                                       snapshots (see durability --help)
              gatehouse-bench watch [options]          push latency with N connections
                                                       watching (see watch --help)
              gatehouse-bench restart [options]        snapshot and restart of a big tenant
                                                       (see restart --help)
              gatehouse-bench retention [options]      writes/s while the feed, keys and
                                                       histories fill, then full and aging
              gatehouse-bench outbox [--owed N]        memory an owed event costs while a
                                                       webhook is down
              gatehouse-bench --smoke                  what CI runs: micro briefly, then
                                                       ping, config.get, config.put,
                                                       project.create, http.healthz and
                                                       http.op-sync in-process, 4
                                                       connections x pipeline 4, 1 s each,
                                                       then durability with tiny sizes;
                                                       checks the tool works, asserts no speed

            exit codes: 0 ok; 1 failure (error answers, nothing completed, server
            unreachable or wrong key); 2 usage.
            """
    }
}
