#!/usr/bin/env python3
"""Backup and verified restore of a large board, against the sqlite3 shell's .backup and .restore of the same file.

Uses the board of Tools/Benchmarks/audit-scale/run.py (10,000 plug-ins, 1,000,000 audit rows; made with
`audit-scale-board` when missing and kept in --work). Each pair runs alternately (A B A B …) --runs times, and the
median wall time of each and the median of the pairwise ratios are printed:

  backup    plugboard backup --to FILE (online copy, then the copy's audit chain and state root verified)
            against  sqlite3 BOARD ".backup FILE" (online copy, not verified)
  restore   plugboard restore --from FILE onto a copy of the board (the backup verified, stops carried forward from
            the board it replaces, the swap)  against  sqlite3 COPY ".restore FILE"

Build first:
    swift build -c release --product plugboard
    PLUGBOARD_BENCHMARKS=1 swift build -c release --product audit-scale-board
Usage: Tools/Benchmarks/backup/run.py [--runs 5] [--bin .build/release] [--work /tmp/plugboard-audit-scale]
"""
import argparse, glob, os, shutil, statistics, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "audit-scale"))
import scale_board

p = argparse.ArgumentParser()
p.add_argument("--runs", type=int, default=5)
p.add_argument("--bin", default=".build/release")
p.add_argument("--work", default="/tmp/plugboard-audit-scale")
p.add_argument("--rows", type=int, default=1_000_000)
p.add_argument("--plugins", type=int, default=10_000)
args = p.parse_args()
cli = os.path.abspath(os.path.join(args.bin, "plugboard"))
board = scale_board.board(args.bin, args.work, args.plugins, args.rows)
env = scale_board.environment()

scratch = os.path.join(args.work, "backup-bench")
shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)


def timed(command, prepare=None):
    if prepare:
        prepare()
    started = time.monotonic()
    result = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.monotonic() - started
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed: {result.stderr.strip()}")
    return elapsed


def fresh_copy(name):
    """A copy of the board (with its key file) to restore onto, made outside the timing."""
    target = os.path.join(scratch, name)
    for path in glob.glob(target + "*"):
        shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    shutil.copyfile(board, target)
    if os.path.exists(board + ".key"):
        shutil.copyfile(board + ".key", target + ".key")
    return target


backup_file = os.path.join(scratch, "backup.sqlite")
peer_file = os.path.join(scratch, "peer.sqlite")
pairs = {
    "backup": (lambda: timed([cli, "backup", "--db", board, "--to", backup_file]),
               lambda: timed(["sqlite3", board, f".backup '{peer_file}'"])),
    "restore": (lambda: timed([cli, "restore", "--from", backup_file, "--db", os.path.join(scratch, "ours.sqlite")],
                              lambda: fresh_copy("ours.sqlite")),
                lambda: timed(["sqlite3", os.path.join(scratch, "theirs.sqlite"), f".restore '{peer_file}'"],
                              lambda: fresh_copy("theirs.sqlite"))),
}
size = os.path.getsize(board) / (1 << 20)
print(f"board: {args.plugins} plug-ins, {args.rows} audit rows, {size:.0f} MiB; {args.runs} runs of each, alternating", flush=True)
print(f"{'operation':10} {'plugboard s':>12} {'sqlite3 s':>10} {'ratio':>7}")
for name, (ours, theirs) in pairs.items():
    ours(), theirs()  # warm-up: the page cache, and the files the restore reads
    a, b = [], []
    for _ in range(args.runs):
        a.append(ours())
        b.append(theirs())
    ratio = statistics.median(x / y for x, y in zip(a, b))
    print(f"{name:10} {statistics.median(a):12.2f} {statistics.median(b):10.2f} {ratio:6.1f}×", flush=True)
shutil.rmtree(scratch, ignore_errors=True)
