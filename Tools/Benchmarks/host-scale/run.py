#!/usr/bin/env python3
"""Host and CLI cost at registry scale, measured with real processes.

Makes a board with N registered plug-ins (one `plugboard plugin register FOLDER` command), enables 12 of them, then:
- times `plugboard plugin list` (median of runs),
- starts `plugboard-test-host` with the 12 enabled plug-ins compiled in and times its start (spawn to "started"),
- throws kill switches with the CLI and times each from the CLI's exit to the host's "deactivated" line
  (the default poll interval, 100 ms; the kill lands at a random moment of the cycle), reviving in between.

With --board, an existing board of such plug-ins is used instead (12 enabled the same way; for example the board of
Tools/Benchmarks/audit-scale, whose audit log has a million rows); it gains the kills' audit rows.

Usage: Tools/Benchmarks/host-scale/run.py [--plugins N] [--kills K] [--bin .build/release] [--board PATH]
Prints one line per measure and, last, `host-scale: …`.
"""
import argparse, json, os, random, shutil, statistics, subprocess, sys, tempfile, threading, time

p = argparse.ArgumentParser()
p.add_argument("--plugins", type=int, default=10000)
p.add_argument("--kills", type=int, default=30)
p.add_argument("--bin", default=".build/release")
p.add_argument("--poll-ms", type=int, default=100)
p.add_argument("--host-bin", help="the folder of plugboard-test-host, when not --bin")
p.add_argument("--board", help="an existing board of --plugins plug-ins named com.scale.pNNNNNN, 12 of them enabled")
args = p.parse_args()
CLI = os.path.abspath(os.path.join(args.bin, "plugboard"))
HOST = os.path.abspath(os.path.join(args.host_bin or args.bin, "plugboard-test-host"))
work = tempfile.mkdtemp(prefix="plugboard-host-scale-")
board = os.path.abspath(args.board) if args.board else os.path.join(work, "board.sqlite")
env = {k: v for k, v in os.environ.items() if not k.startswith("PLUGBOARD_")}


def cli(*a, check=True):
    r = subprocess.run([CLI, *a, "--db", board], capture_output=True, env=env)
    if check and r.returncode != 0:
        sys.exit(f"plugboard {' '.join(a)} failed: {r.stderr.decode()}")
    return r


try:
    enabled = [f"com.scale.p{i:06d}" for i in range(0, args.plugins, max(1, args.plugins // 12))][:12]
    register_s = 0.0
    if not args.board:
        folder = os.path.join(work, "manifests")
        os.makedirs(folder)
        for i in range(args.plugins):
            with open(os.path.join(folder, f"p{i:06d}.json"), "w") as f:
                json.dump({"id": f"com.scale.p{i:06d}", "name": f"P{i}", "version": "1.0.0", "host": ">=1.0.0"}, f)
        cli("init")
        t = time.monotonic()
        cli("plugin", "register", folder)
        register_s = time.monotonic() - t
        for pid in enabled:
            cli("plugin", "enable", pid)
    lists = []
    for _ in range(11):
        t = time.monotonic()
        cli("plugin", "list")
        lists.append(time.monotonic() - t)

    t0 = time.monotonic()
    host = subprocess.Popen([HOST, "--db", board, "--plugins", ",".join(enabled), "--poll-ms", str(args.poll_ms)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    lines = []
    cond = threading.Condition()

    def reader():
        for raw in host.stdout:
            with cond:
                lines.append((time.monotonic(), raw.decode()))
                cond.notify_all()

    threading.Thread(target=reader, daemon=True).start()

    def wait_for(pred, after, timeout=30):
        deadline = time.monotonic() + timeout
        with cond:
            while True:
                for i in range(after, len(lines)):
                    if pred(lines[i][1]):
                        return lines[i][0], i
                left = deadline - time.monotonic()
                if left <= 0:
                    sys.exit("timed out waiting for the host")
                cond.wait(left)

    started_at, _ = wait_for(lambda l: '"started"' in l, 0)
    start_ms = (started_at - t0) * 1000
    target = enabled[0]
    reactions, noticing, applying = [], [], []
    for _ in range(args.kills):
        time.sleep(random.uniform(0, args.poll_ms / 1000))
        mark = len(lines)
        cli("plugin", "kill", target, "--reason", "bench")
        done = time.monotonic()
        at, index = wait_for(lambda l: '"deactivated"' in l and target in l, mark)
        reactions.append((at - done) * 1000)
        # The host's "changed" line comes when its poll noticed the commit, before it re-reads the board.
        noticed = [t for t, l in lines[mark:index] if '"changed"' in l]
        if noticed:
            noticing.append((noticed[-1] - done) * 1000)
            applying.append((at - noticed[-1]) * 1000)
        mark = len(lines)
        cli("plugin", "revive", target)
        wait_for(lambda l: '"loaded"' in l and target in l, mark)
    host.stdin.close()
    host.wait(timeout=30)
    reactions.sort()
    p99 = reactions[min(len(reactions) - 1, int(len(reactions) * 0.99))]
    if not args.board:
        print(f"register {args.plugins} manifests in one command: {register_s:.1f} s")
    print(f"plugin list ({args.plugins} plug-ins): median {statistics.median(lists) * 1000:.0f} ms (process start included)")
    print(f"host start ({args.plugins} registered, 12 enabled): {start_ms:.0f} ms (spawn to started)")
    print(f"kill to deactivation (poll {args.poll_ms} ms, {len(reactions)} kills): p50 {statistics.median(reactions):.0f} ms, "
          f"p99 {p99:.0f} ms, max {reactions[-1]:.0f} ms; noticed after p50 {statistics.median(noticing or [0]):.0f} ms, "
          f"applied in p50 {statistics.median(applying or [0]):.0f} ms")
    print(f"host-scale: {args.plugins} plug-ins, list {statistics.median(lists) * 1000:.0f} ms, start {start_ms:.0f} ms, "
          f"kill p50 {statistics.median(reactions):.0f} ms p99 {p99:.0f} ms")
finally:
    shutil.rmtree(work, ignore_errors=True)
