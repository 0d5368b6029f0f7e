#!/usr/bin/env python3
"""How much one connected host stream costs `plugboard serve`, and how fast a change reaches all of them.

Opens N host event streams (GET /api/host/stream, raw sockets, as N hosts would) against a release `plugboard serve`,
reads the server's resident memory (VmRSS) before and after, then throws a kill switch with the CLI and times until
every stream has received the `changed` event.

Usage: Tools/Benchmarks/host-streams/run.py [--streams 1000] [--plugboard .build/release/plugboard]
Python 3 standard library only. Prints one line per figure.
"""

import argparse
import json
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--plugboard", default=os.path.join(REPO, ".build/release/plugboard"))
    arguments = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="plugboard-streams-")
    env = dict(os.environ, PLUGBOARD_DB=os.path.join(scratch, "board.sqlite"))

    def cli(*args):
        return subprocess.run([arguments.plugboard, *args], env=env, check=True, capture_output=True, text=True).stdout

    cli("init")
    manifest = os.path.join(scratch, "m.json")
    with open(manifest, "w") as handle:
        json.dump({"id": "com.bench.victim", "name": "victim", "version": "1.0.0"}, handle)
    cli("plugin", "register", manifest)
    cli("plugin", "enable", "com.bench.victim")
    token = json.loads(cli("token", "create", "--name", "bench", "--for", "hosts", "--json"))["token"]
    server = subprocess.Popen([arguments.plugboard, "serve", "--listen", "127.0.0.1:0", "--log-level", "error"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline()
    host, port = line.split("http://", 1)[1].split()[0].rstrip(".:").rsplit(":", 1)
    time.sleep(0.5)
    idle = rss_kib(server.pid)

    selector = selectors.DefaultSelector()
    sockets = []
    request = f"GET /api/host/stream HTTP/1.1\r\nHost: bench\r\nAuthorization: {token}\r\nAccept: text/event-stream\r\n\r\n".encode()
    for _ in range(arguments.streams):
        connection = socket.create_connection((host, int(port)))
        connection.sendall(request)
        connection.setblocking(False)
        selector.register(connection, selectors.EVENT_READ, data=bytearray())
        sockets.append(connection)

    def pump(until, predicate):
        while time.time() < until and not predicate():
            for key, _ in selector.select(timeout=0.05):
                try:
                    chunk = key.fileobj.recv(65536)
                except BlockingIOError:
                    continue
                key.data.extend(chunk)
        return predicate()

    connected = pump(time.time() + 60, lambda: all(b"event: connected" in selector.get_key(s).data for s in sockets))
    time.sleep(1)
    loaded = rss_kib(server.pid)
    for s in sockets:
        selector.get_key(s).data.clear()
    start = time.time()
    cli("plugin", "kill", "com.bench.victim", "--reason", "bench")
    after_cli = time.time()
    arrival = {}

    def all_changed():
        now = time.time()
        for s in sockets:
            if s not in arrival and b"event: changed" in selector.get_key(s).data:
                arrival[s] = now
        return len(arrival) == len(sockets)

    reached = pump(time.time() + 60, all_changed)
    delays = sorted((stamp - after_cli) * 1000 for stamp in arrival.values())
    print(f"host-streams: {arguments.streams} streams connected: {connected}")
    print(f"host-streams: server RSS idle {idle / 1024:.1f} MiB, with {arguments.streams} streams {loaded / 1024:.1f} MiB: "
          f"{(loaded - idle) / arguments.streams:.1f} KiB per stream")
    if delays:
        print(f"host-streams: a kill switch reached {len(delays)}/{arguments.streams} streams, from the CLI's exit: "
              f"p50 {delays[len(delays) // 2]:.0f} ms, p99 {delays[int(len(delays) * 0.99) - 1]:.0f} ms, max {delays[-1]:.0f} ms "
              f"(the CLI ran {1000 * (after_cli - start):.0f} ms)")
    for s in sockets:
        s.close()
    server.terminate()
    server.wait(timeout=30)
    return 0 if connected and reached else 1


if __name__ == "__main__":
    sys.exit(main())
