#!/usr/bin/env python3
"""Tools/Benchmarks/admin-api/run.py: the operations API of `plugboard serve --admin`, measured on loopback.

On a scratch board of 10,000 registered plug-ins, with release binaries:

1. kill     `plugboard plugin kill ID` as a whole command (process start to exit), on the board file and with
            `--server` through the API, alternating, each run on a plug-in not killed yet (every run writes);
            prints the medians and p99 and the difference of the medians.
2. list     `plugboard plugin list` of 10,000 plug-ins as a whole command, file against --server, alternating.
3. reads    POST /api/admin/plugin.list {"limit": 1000} pages (the whole listing in 10 pages), from 1 and from 4 clients
            (keep-alive connections): pages per second, p50 and p99.
4. writes   POST /api/admin/plugin.enable and plugin.disable, each on another plug-in (every request writes a change and its
            audit row), from 1 and from 4 clients: writes per second, p50 and p99.
5. flood    `plugboard --server URL plugin kill` while 4 clients read full listings of 10,000 plug-ins as fast as they
            can, against the same command with the server idle (kill switches have a lane of their own).

Usage: Tools/Benchmarks/admin-api/run.py [--runs N] [--seconds S] [--bin PLUGBOARD]

Binary: --bin, else $PLUGBOARD_BIN, else /tmp/relbuild/release/plugboard, else <repo>/.build/release/plugboard. The
equivalent of step 1 with hyperfine (Debian's package), on one plug-in revived before each run:
  hyperfine -N --prepare 'plugboard plugin revive P --db B' 'plugboard plugin kill P --reason r --db B' \\
    'plugboard --server URL plugin kill P --reason r'   (PLUGBOARD_TOKEN set)
"""

import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def ms(seconds):
    return f"{seconds * 1000:.1f} ms"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--bin")
    args = parser.parse_args()
    binary = args.bin or os.environ.get("PLUGBOARD_BIN")
    if not binary:
        for candidate in ["/tmp/relbuild/release/plugboard", os.path.join(REPO, ".build", "release", "plugboard")]:
            if os.path.exists(candidate):
                binary = candidate
                break
    if not binary:
        sys.exit("build the release binary first: swift build -c release --product plugboard")
    work = tempfile.mkdtemp(prefix="plugboard-admin-bench-")
    board = os.path.join(work, "board.sqlite")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLUGBOARD_")}

    def cli(*arguments, extra_env=None):
        result = subprocess.run([binary, *arguments], cwd=work, env={**env, **(extra_env or {})}, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"plugboard {' '.join(arguments)} failed: {result.stderr.strip()}")
        return result.stdout

    cli("init", "--db", board)
    manifests = os.path.join(work, "manifests")
    os.mkdir(manifests)
    count = 10_000
    for index in range(count):
        with open(os.path.join(manifests, f"m{index:05d}.json"), "w") as file:
            json.dump({"id": f"com.example.p{index:05d}", "name": f"Plug-in {index}", "version": "1.0.0"}, file)
    cli("plugin", "register", manifests, "--db", board)
    token = json.loads(cli("access-token", "create", "--name", "bench", "--json", "--db", board))["token"]
    server = subprocess.Popen([binary, "serve", "--db", board, "--admin", "--listen", "127.0.0.1:0", "--log-level", "error"],
                              cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(re.search(r"127\.0\.0\.1:(\d+)", server.stdout.readline()).group(1))
    url = f"http://127.0.0.1:{port}"
    remote_env = {**env, "PLUGBOARD_TOKEN": token}
    print(f"admin-api: board of {count} plug-ins, serve --admin at {url}, binary {binary}, {os.cpu_count()} CPUs")

    def timed(arguments, environment):
        start = time.perf_counter()
        result = subprocess.run([binary, *arguments], cwd=work, env=environment, capture_output=True)
        elapsed = time.perf_counter() - start
        if result.returncode != 0:
            sys.exit(f"plugboard {' '.join(arguments)} failed: {result.stderr.decode().strip()}")
        return elapsed

    try:
        # 1. kill, whole command.
        local, remote = [], []
        for run in range(args.runs):
            local.append(timed(["plugin", "kill", f"com.example.p{2 * run:05d}", "--reason", "bench", "--db", board], env))
            remote.append(timed(["--server", url, "plugin", "kill", f"com.example.p{2 * run + 1:05d}", "--reason", "bench"],
                                remote_env))
        difference = statistics.median(remote) - statistics.median(local)
        print(f"kill (whole command, {args.runs} each, alternating): board file median {ms(statistics.median(local))} "
              f"p99 {ms(percentile(local, 0.99))}; --server median {ms(statistics.median(remote))} "
              f"p99 {ms(percentile(remote, 0.99))}; difference of medians {ms(difference)}")

        # 2. plugin list of 10,000, whole command.
        local, remote = [], []
        for _ in range(max(5, args.runs // 4)):
            local.append(timed(["plugin", "list", "--db", board], env))
            remote.append(timed(["--server", url, "plugin", "list"], remote_env))
        print(f"plugin list of {count} (whole command): board file median {ms(statistics.median(local))}, "
              f"--server median {ms(statistics.median(remote))} ({statistics.median(remote) / statistics.median(local):.2f}×)")

        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

        def load(clients, make_request):
            latencies = [[] for _ in range(clients)]
            deadline = time.perf_counter() + args.seconds

            def worker(index):
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                step = 0
                while time.perf_counter() < deadline:
                    method, path, body = make_request(index, step, clients)
                    start = time.perf_counter()
                    connection.request(method, path, body=body, headers=headers)
                    response = connection.getresponse()
                    response.read()
                    latencies[index].append(time.perf_counter() - start)
                    if response.status != 200:
                        raise SystemExit(f"{method} {path}: {response.status}")
                    step += 1

            threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.perf_counter() - started
            merged = [value for values in latencies for value in values]
            return len(merged) / elapsed, statistics.median(merged), percentile(merged, 0.99)

        # 3. reads: pages of 1,000.
        def page(index, step, clients):
            body = {"env": "default", "limit": 1000}
            if step % 10:
                body["after"] = f"com.example.p{(step % 10) * 1000 - 1:05d}"
            return "POST", "/api/admin/plugin.list", json.dumps(body)

        for clients in (1, 4):
            rate, p50, p99 = load(clients, page)
            print(f"reads, plugin.list pages of 1,000 ({clients} client{'s' if clients > 1 else ''}): {rate:.0f} pages/s "
                  f"({rate / 10:.1f} full listings/s), p50 {ms(p50)}, p99 {ms(p99)}")

        # 4. writes: each request enables another plug-in.
        counter = [2 * args.runs + 1000]
        lock = threading.Lock()

        def enable(index, step, clients):
            with lock:
                counter[0] += 1
                target = counter[0] % count
            operation = "plugin.enable" if (counter[0] // count) % 2 == 0 else "plugin.disable"
            return "POST", f"/api/admin/{operation}", json.dumps({"env": "default", "id": f"com.example.p{target:05d}"})

        for clients in (1, 4):
            rate, p50, p99 = load(clients, enable)
            print(f"writes, plugin.enable/disable ({clients} client{'s' if clients > 1 else ''}): {rate:.0f} writes/s, "
                  f"p50 {ms(p50)}, p99 {ms(p99)}")

        # 5. A remote kill switch while others flood the server with reads.
        def kills(first):
            return [timed(["--server", url, "plugin", "kill", f"com.example.p{first + run:05d}", "--reason", "bench"], remote_env)
                    for run in range(max(10, args.runs // 2))]

        idle = kills(5000)
        flood_done = threading.Event()

        def flood():
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            while not flood_done.is_set():
                connection.request("POST", "/api/admin/plugin.list", body='{"env": "default"}', headers=headers)
                connection.getresponse().read()

        flooders = [threading.Thread(target=flood) for _ in range(4)]
        for thread in flooders:
            thread.start()
        time.sleep(1)
        busy = kills(6000)
        flood_done.set()
        for thread in flooders:
            thread.join()
        print(f"remote kill (whole command) with the server idle: median {ms(statistics.median(idle))}, "
              f"p99 {ms(percentile(idle, 0.99))}; while 4 clients read full listings: median {ms(statistics.median(busy))}, "
              f"p99 {ms(percentile(busy, 0.99))}")
    finally:
        server.terminate()
        server.wait(timeout=60)
        verify = subprocess.run([binary, "audit", "verify", "--db", board], env=env, capture_output=True, text=True)
        print("admin-api: audit verify afterwards:", "ok" if verify.returncode == 0 else verify.stderr.strip())
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
