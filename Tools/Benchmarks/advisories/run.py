#!/usr/bin/env python3
"""Importing advisories at scale, as an operator does it: `plugboard advisory import FOLDER`, one command per folder.

Makes a board of --plugins plug-ins with four releases each (1.0.0, 1.1.0, 1.2.0, 2.0.0; one `plugboard plugin
register FOLDER` command), and --advisories OSV documents over them (generated, seeded, in the shape of the
specification: SEMVER ranges with introduced/fixed, introduced "0"/last_affected, lists of versions, aliases, a
severity by name or by CVSS v3 vector, one in 50 withdrawn by its publisher; each affects 1 to 3 plug-ins), written in
folders of 200 (the most one import takes). Then, for each run, on a fresh copy of the board, times every folder's
`plugboard advisory import` from the first process's start to the last one's exit, and checks with
`advisory list --json` that every document is on the board.

Usage: Tools/Benchmarks/advisories/run.py [--plugins N] [--advisories N] [--runs R] [--bin .build/release] [--keep DIR]
Prints one line per run and, last, `advisories: …`. --keep writes the board and the folders to DIR (for hyperfine).
"""
import argparse, json, os, random, shutil, statistics, subprocess, sys, tempfile, time

p = argparse.ArgumentParser()
p.add_argument("--plugins", type=int, default=1000)
p.add_argument("--advisories", type=int, default=10000)
p.add_argument("--runs", type=int, default=3)
p.add_argument("--bin", default=".build/release")
p.add_argument("--keep", help="a folder to keep the board and the advisories' folders in")
args = p.parse_args()
CLI = os.path.abspath(os.path.join(args.bin, "plugboard"))
work = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="plugboard-advisories-")
os.makedirs(work, exist_ok=True)
template = os.path.join(work, "board.sqlite")
env = {k: v for k, v in os.environ.items() if not k.startswith("PLUGBOARD_")}
RELEASES = ["1.0.0", "1.1.0", "1.2.0", "2.0.0"]
PER_IMPORT = 200


def cli(board, *a):
    r = subprocess.run([CLI, *a, "--db", board], capture_output=True, env=env)
    if r.returncode != 0:
        sys.exit(f"plugboard {' '.join(a)} failed: {r.stderr.decode()}")
    return r


def plugin(i):
    return f"com.bench.adv{i:05d}"


def document(n, rng):
    """One OSV document: its affected entries take turns among the range shapes the board reads."""
    affected = []
    for pid in rng.sample(range(args.plugins), rng.randint(1, 3)):
        package = {"ecosystem": "Plugboard", "name": plugin(pid)}
        shape = rng.randrange(3)
        if shape == 0:
            low, high = sorted(rng.sample(RELEASES + ["2.1.0"], 2), key=lambda v: tuple(map(int, v.split("."))))
            affected.append({"package": package, "ranges": [{"type": "SEMVER", "events": [{"introduced": low}, {"fixed": high}]}]})
        elif shape == 1:
            last = rng.choice(RELEASES[:3])
            affected.append({"package": package, "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"last_affected": last}]}]})
        else:
            affected.append({"package": package, "versions": rng.sample(RELEASES, rng.randint(1, 2))})
    doc = {
        "schema_version": "1.7.0", "id": f"PBSA-2026-{n:05d}", "modified": "2026-11-20T10:00:00Z", "published": "2026-11-19T10:00:00Z",
        "aliases": [f"CVE-2026-{n + 20000}", f"GHSA-{n:04x}-bench-adv1"], "summary": f"Generated advisory {n} for the import benchmark",
        "affected": affected,
    }
    if n % 2:
        doc["database_specific"] = {"severity": rng.choice(["LOW", "MODERATE", "HIGH", "CRITICAL"])}
    else:
        doc["severity"] = [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:L/A:N"}]
    if n % 50 == 0:
        doc["withdrawn"] = "2026-11-21T10:00:00Z"
    return doc


try:
    manifests = os.path.join(work, "manifests")
    os.makedirs(manifests, exist_ok=True)
    for i in range(args.plugins):
        for version in RELEASES:
            with open(os.path.join(manifests, f"{plugin(i)}-{version}.json"), "w") as f:
                json.dump({"id": plugin(i), "name": f"Bench {i}", "version": version, "host": ">=1.0.0"}, f)
    if os.path.exists(template):
        os.remove(template)
    cli(template, "init")
    cli(template, "plugin", "register", manifests)

    rng = random.Random(0xAD5)
    folders = []
    for start in range(0, args.advisories, PER_IMPORT):
        folder = os.path.join(work, f"advisories-{start // PER_IMPORT:03d}")
        os.makedirs(folder, exist_ok=True)
        for n in range(start, min(start + PER_IMPORT, args.advisories)):
            with open(os.path.join(folder, f"PBSA-2026-{n:05d}.json"), "w") as f:
                json.dump(document(n, rng), f)
        folders.append(folder)

    totals = []
    for run in range(1, args.runs + 1):
        board = os.path.join(work, f"run-{run}.sqlite")
        shutil.copyfile(template, board)
        each = []
        t0 = time.monotonic()
        for folder in folders:
            t = time.monotonic()
            cli(board, "advisory", "import", folder)
            each.append(time.monotonic() - t)
        total = time.monotonic() - t0
        listed = json.loads(cli(board, "advisory", "list", "--json").stdout)
        if len(listed) != args.advisories:
            sys.exit(f"run {run}: {len(listed)} advisories on the board, {args.advisories} imported")
        affecting = len(json.loads(cli(board, "advisory", "list", "--affecting", "--json").stdout))
        totals.append(total)
        print(f"run {run}: {args.advisories} advisories in {len(folders)} imports: {total:.2f} s "
              f"(per import p50 {statistics.median(each) * 1000:.0f} ms, max {max(each) * 1000:.0f} ms); {affecting} affect a release")
        if not args.keep:
            os.remove(board)
    print(f"advisories: importing {args.advisories} over {args.plugins} plug-ins, median {statistics.median(totals):.2f} s "
          f"over {args.runs} runs (goal < 5 s)")
finally:
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
