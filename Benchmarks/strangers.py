#!/usr/bin/env python3
"""Strangers at the front door: N connections that never say hello.

Opens N connections to a running Gatehouse server, each sending BYTES bytes with no newline,
then trickling one byte a second to each for HOLD seconds (a slowloris). Prints the server's
resident memory (from /proc/PID/statm) before, after the bytes, and at the end; how many of the
connections the server still holds; and whether a client with the admin key can connect and say
hello meanwhile (its answer, or that it timed out). 127.0.0.1 only; it stops nothing it did not
start (the server is the caller's).

    python3 Benchmarks/strangers.py --port 7431 --pid PID --key ADMIN_KEY [--connections 10000]
        [--bytes 65536] [--hold 15]
"""
import argparse
import json
import os
import resource
import select
import socket
import time


def resident_mib(pid):
    with open(f"/proc/{pid}/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1048576


def probe(port, key, timeout=5.0):
    """Connects, says hello, answers what the server said (or why nothing came)."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as client:
            client.sendall(json.dumps({"id": 1, "op": "hello", "key": key}).encode() + b"\n")
            line = b""
            while not line.endswith(b"\n"):
                chunk = client.recv(4096)
                if not chunk:
                    return f"closed after {line[:120]!r}"
                line += chunk
            answer = json.loads(line)
            took = (time.monotonic() - started) * 1000
            if answer.get("ok"):
                return f"hello ok in {took:.0f} ms"
            return f"refused: {answer['error']['code']} in {took:.0f} ms"
    except OSError as error:
        return f"failed: {error}"


def still_open(sockets):
    """The sockets the server has not closed: what it sent is read and dropped, and a socket
    whose read says end of file (or fails) is closed here too."""
    open_ones = []
    for client in sockets:
        try:
            while True:
                chunk = client.recv(65536)
                if not chunk:
                    raise ConnectionResetError("closed by the server")
        except (BlockingIOError, InterruptedError):
            open_ones.append(client)
        except OSError:
            client.close()
    return open_ones


def send_some(client, data):
    try:
        return client.send(data)
    except (BlockingIOError, InterruptedError):
        return 0
    except OSError:
        return -1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True, help="the server's process id (for its memory)")
    parser.add_argument("--key", required=True, help="the server's admin key (for the probe)")
    parser.add_argument("--connections", type=int, default=10000)
    parser.add_argument("--bytes", type=int, default=65536, help="bytes each stranger sends at once, with no newline")
    parser.add_argument("--hold", type=int, default=15, help="seconds of trickling one byte a second to each")
    options = parser.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, options.connections + 1024), hard))
    report = {"connections": options.connections, "bytes_each": options.bytes, "hold_s": options.hold}
    report["resident_mib_before"] = round(resident_mib(options.pid), 1)

    strangers = []
    for _ in range(options.connections):
        client = socket.create_connection(("127.0.0.1", options.port))
        client.setblocking(False)
        strangers.append(client)
    payload = b"x" * options.bytes
    sent = [0] * len(strangers)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(0 <= s < options.bytes for s in sent):
        for index, client in enumerate(strangers):
            if 0 <= sent[index] < options.bytes:
                count = send_some(client, payload[sent[index]:])
                sent[index] = -1 if count < 0 else sent[index] + count
    time.sleep(1)
    report["resident_mib_after_bytes"] = round(resident_mib(options.pid), 1)
    strangers = still_open(strangers)
    report["open_after_bytes"] = len(strangers)
    report["probe_after_bytes"] = probe(options.port, options.key)

    for second in range(options.hold):
        for client in strangers:
            send_some(client, b"y")
        time.sleep(1)
    strangers = still_open(strangers)
    report["open_after_hold"] = len(strangers)
    report["resident_mib_after_hold"] = round(resident_mib(options.pid), 1)
    report["probe_after_hold"] = probe(options.port, options.key)
    for client in strangers:
        client.close()
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
