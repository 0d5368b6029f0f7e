#!/usr/bin/env python3
"""The CLI on a board with a long audit log, measured with real processes.

Makes a board of 10,000 plug-ins and 1,000,000 audit rows with `audit-scale-board` (Tools/Benchmarks/AuditScale; its
header says what the rows are), kept in --work between runs, then times each command below (median of --runs, the
output going to /dev/null) and reports its peak memory (the child's maximum resident set size). With --vs, a second
`plugboard` binary runs each command too, alternating with the first, and the last column is the ratio.

Build first:
    swift build -c release --product plugboard
    PLUGBOARD_BENCHMARKS=1 swift build -c release --product audit-scale-board
Usage: Tools/Benchmarks/audit-scale/run.py [--rows 1000000] [--plugins 10000] [--runs 5] [--bin .build/release]
                                          [--vs OTHER/plugboard] [--work /tmp/plugboard-audit-scale]
"""
import argparse, os, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale_board

p = argparse.ArgumentParser()
p.add_argument("--rows", type=int, default=1_000_000)
p.add_argument("--plugins", type=int, default=10_000)
p.add_argument("--runs", type=int, default=5)
p.add_argument("--bin", default=".build/release")
p.add_argument("--vs", help="another plugboard binary, run alternately with the first")
p.add_argument("--work", default="/tmp/plugboard-audit-scale")
args = p.parse_args()
cli = os.path.abspath(os.path.join(args.bin, "plugboard"))
board = scale_board.board(args.bin, args.work, args.plugins, args.rows)
env = scale_board.environment()

commands = [
    ["audit", "--limit", "50"],
    ["audit", "--actor", "alice", "--limit", "50"],
    ["audit", "--actor", "nobody"],
    ["audit", "--actor", "ci-pipeline"],
    ["audit", "--target", "com.scale.p000123"],
    ["audit", "--target", "com.scale.p000123", "--json"],
    ["audit", "--since", "2999-01-01"],
    ["audit"],
    ["audit", "--json"],
    ["audit", "verify"],
    ["plugin", "list"],
]


def run(binary, command):
    """Seconds and peak memory (MB) of one run, its output thrown away."""
    started = time.monotonic()
    process = subprocess.Popen([binary, *command, "--db", board], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.monotonic() - started
    if status != 0:
        sys.exit(f"{binary} {' '.join(command)} failed: {process.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss / 1024


binaries = [cli] + ([os.path.abspath(args.vs)] if args.vs else [])
header = f"{'command':52} {'median':>9} {'peak MB':>8}"
if args.vs:
    header += f" {'vs median':>10} {'vs MB':>8} {'ratio':>6}"
print(f"board: {args.plugins} plug-ins, {args.rows} audit rows ({os.path.getsize(board) / 1e6:.0f} MB)")
print(header)
for command in commands:
    results = {binary: [] for binary in binaries}
    for _ in range(args.runs):
        for binary in binaries:
            results[binary].append(run(binary, command))
    line = f"{'plugboard ' + ' '.join(command):52}"
    medians = []
    for binary in binaries:
        seconds = statistics.median(r[0] for r in results[binary])
        memory = max(r[1] for r in results[binary])
        medians.append(seconds)
        line += f" {seconds * 1000:7.0f} ms {memory:8.0f}"
    if args.vs:
        line += f" {medians[1] / medians[0]:5.1f}x"
    print(line, flush=True)
