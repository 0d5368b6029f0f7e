#!/usr/bin/env python3
"""Tools/Benchmarks/webhooks/run.py: webhook delivery by `plugboard serve`, measured with real receivers.

Receivers are `Tools/Scripts/webhook-receiver` processes on loopback (each delivery verified with PyPI's
`standardwebhooks`, deduplicated by `webhook-id`, arrival times on the system's monotonic clock); `serve` runs with
`--webhook-allow-private`. Each part uses a scratch board of its own:

1. kill     10 endpoints, one of which hangs (`--hang`: takes the request, never answers). K kill switches with
            `plugboard plugin kill ID` (each a new plug-in, at a random moment of delivery's poll cycle); latency from
            the audit row's commit (its `at`, in milliseconds) and from the command's exit to the arrival of its
            `plugin.kill` at the receivers: p50 and p99 to the first healthy receiver and to the last of the 9.
            Goal: p99 < 250 ms.
2. drain    10 healthy endpoints; `serve --admin` writes R rows (`POST /api/admin/plugin.enable` / `.disable`, one
            client) while the same loop times K `plugboard plugin kill` commands on the board file. Once with
            delivery on, once with every endpoint disabled, in N rounds whose order alternates (with, without;
            without, with; …) so that a change in the machine's load weighs on both: the time from the first row's
            request to the last endpoint holding all R rows (the first round's; goal < 10 s), and the kills' p50, p90
            and p99 both ways over every round, and their ratios (goal ≈ 1). Then R rows written while the endpoints
            are disabled wait for them: enabled again, a fresh `serve` sends that backlog; the time from its start to
            the last endpoint holding it all. Every receiver's chain is checked: every seq, each `prev_hash` the hash
            of the row before.
3. crash    10 healthy endpoints replayed from seq 1 over a log of R rows, and a CLI writer adding rows meanwhile;
            `serve` is killed with SIGKILL C times at a random moment of the delivery and started again; then every
            receiver must hold every seq from 1 to the head, chained (duplicates counted, not missing).

Usage: Tools/Benchmarks/webhooks/run.py [--bin .build/release] [--python PY] [--kills K] [--rows R] [--rounds N] [--crashes C]
                                        [--only kill,drain,crash] [--control] [--receiver-nice N] [--receiver-idle]
                                        [--receiver-folder DIR]

Receivers on other machines, as in production, are modelled by `--receiver-nice 19 --receiver-idle` (their CPU after
every other process's, under Linux's SCHED_IDLE policy: a process that wakes takes the processor from them at once) and `--receiver-folder /dev/shm` (their lines, appended at every delivery, written to a tmpfs rather than
to the disk whose every commit of the board waits for `fdatasync`).

Binary: `--bin` names the folder of `plugboard` (default `.build/release`: `swift build -c release --product plugboard`;
`.build/debug` works too, and the figures say which). Python: `--python`, else $PLUGBOARD_STANDARDWEBHOOKS_PYTHON,
else .build/webhooks-venv/bin/python (`python3 -m venv .build/webhooks-venv &&
.build/webhooks-venv/bin/pip install standardwebhooks==1.1.0`). Prints one line per measure and, last, `webhooks: …`.
Exits 1 when a receiver misses a row or a chain breaks (the scratch folders are then kept, and named).
"""
import argparse
import datetime
import http.client
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RECEIVER = os.path.join(REPO, "Tools", "Scripts", "webhook-receiver")

parser = argparse.ArgumentParser()
parser.add_argument("--bin", default=os.path.join(REPO, ".build", "release"))
parser.add_argument("--python")
parser.add_argument("--kills", type=int, default=60)
parser.add_argument("--rows", type=int, default=1000)
parser.add_argument("--rounds", type=int, default=3, help="rounds of the drain part's two phases")
parser.add_argument("--control", action="store_true",
                    help="the drain part with every endpoint disabled in both halves: the kills' ratios are the noise")
parser.add_argument("--crashes", type=int, default=20)
parser.add_argument("--only", default="kill,drain,crash")
parser.add_argument("--receiver-nice", type=int, default=0,
                    help="run the receivers at this niceness (they run on other machines in production)")
parser.add_argument("--receiver-idle", action="store_true",
                    help="run the receivers under the SCHED_IDLE policy: their CPU only when no other process wants it")
parser.add_argument("--receiver-folder",
                    help="keep the receivers' lines in a folder made under this one (a tmpfs such as /dev/shm keeps "
                         "their writes off the board's disk, as on other machines), not beside the board")
args = parser.parse_args()
CLI = os.path.abspath(os.path.join(args.bin, "plugboard"))
PYTHON = args.python or os.environ.get("PLUGBOARD_STANDARDWEBHOOKS_PYTHON") or os.path.join(
    REPO, ".build", "webhooks-venv", "bin", "python")
ENV = {k: v for k, v in os.environ.items() if not k.startswith("PLUGBOARD_")}
children = []
failures = []
folders = []


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def cpu_seconds(pid):
    """User and system CPU time of a running process, from /proc (Linux)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def unix(timestamp):
    """An audit row's `at` (ISO 8601, UTC, milliseconds) in Unix seconds."""
    return datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def ms(seconds):
    return f"{seconds * 1000:.0f} ms"


class Board:
    """A scratch board in a folder of its own, with P registered plug-ins named com.bench.pNNNNN."""

    def __init__(self, name, plugins):
        self.work = tempfile.mkdtemp(prefix=f"plugboard-webhooks-{name}-")
        folders.append(self.work)
        self.path = os.path.join(self.work, "board.sqlite")
        self.receivers = self.work
        if args.receiver_folder:
            self.receivers = tempfile.mkdtemp(prefix=f"plugboard-webhooks-{name}-receivers-", dir=args.receiver_folder)
            folders.append(self.receivers)
        self.cli("init")
        folder = os.path.join(self.work, "manifests")
        os.mkdir(folder)
        for index in range(plugins):
            with open(os.path.join(folder, f"p{index:05d}.json"), "w") as file:
                json.dump({"id": f"com.bench.p{index:05d}", "name": f"P{index}", "version": "1.0.0"}, file)
        self.cli("plugin", "register", folder)

    def cli(self, *arguments):
        result = subprocess.run([CLI, *arguments, "--db", self.path], cwd=self.work, env=ENV, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"plugboard {' '.join(arguments)} failed: {result.stderr.strip()}")
        return result.stdout

    def timed(self, *arguments):
        """The whole command's time, and its exit on the monotonic clock."""
        start = time.monotonic()
        self.cli(*arguments)
        end = time.monotonic()
        return end - start, end

    def head(self):
        rows = [json.loads(line) for line in self.cli("audit", "--json").splitlines() if line.strip()]
        return max(row["seq"] for row in rows)

    def serve(self, *extra):
        server = subprocess.Popen(
            [CLI, "serve", "--db", self.path, "--listen", "127.0.0.1:0", "--log-level", "error", "--webhook-allow-private", *extra],
            cwd=self.work, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        children.append(server)
        for line in server.stdout:
            found = re.search(r"127\.0\.0\.1:(\d+)", line)
            if found:
                threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()
                return server, int(found.group(1))
        sys.exit("serve did not start")


class Receiver:
    """A `webhook-receiver` process and the endpoint NAME that points at it."""

    def __init__(self, board, name, *options):
        self.folder = os.path.join(board.receivers, f"receiver-{name}")
        os.mkdir(self.folder)
        self.out = os.path.join(self.folder, "out")
        process = subprocess.Popen(
            [*(["chrt", "--idle", "0"] if args.receiver_idle else []), "nice", "-n", str(args.receiver_nice), PYTHON, RECEIVER, "--port-file", self.folder + "/port", "--secret-file", self.folder + "/secret", "--out", self.out,
             *options], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        children.append(process)
        deadline = time.monotonic() + 60
        while not os.path.exists(self.folder + "/port"):
            if time.monotonic() > deadline:
                sys.exit(f"the receiver {name} did not start")
            time.sleep(0.02)
        port = int(open(self.folder + "/port").read())
        added = json.loads(board.cli("webhook", "add", name, f"http://localhost:{port}/hook", "--json"))
        with open(self.folder + "/secret", "w") as file:
            file.write(added["secret"])
        self.name = name
        self.pid = process.pid
        self._offset, self._lines, self._accepted = 0, [], {}

    def deliveries(self):
        """Every line so far (read on from where the last call stopped)."""
        try:
            with open(self.out) as file:
                file.seek(self._offset)
                text = file.read()
        except FileNotFoundError:
            return self._lines
        complete = text[: text.rfind("\n") + 1]
        self._offset += len(complete.encode())
        for line in complete.splitlines():
            if line:
                entry = json.loads(line)
                self._lines.append(entry)
                if entry.get("status") == 200 and entry["seq"] not in self._accepted:
                    self._accepted[entry["seq"]] = entry
        return self._lines

    def accepted(self):
        """seq → the first accepted delivery of it."""
        self.deliveries()
        return self._accepted

    def check(self, low, high):
        """Missing seqs and broken links between `low` and `high`, and the number of duplicate deliveries."""
        lines = self.deliveries()
        rows = self.accepted()
        missing = [seq for seq in range(low, high + 1) if seq not in rows]
        broken = [seq for seq in range(low + 1, high + 1)
                  if seq in rows and seq - 1 in rows and rows[seq]["prev_hash"] != rows[seq - 1]["hash"]]
        errors = [line for line in lines if "error" in line]
        duplicates = sum(1 for line in lines if line.get("duplicate"))
        return missing, broken, errors, duplicates


def wait_until(predicate, timeout, what, poll=0.02):
    """Arrival times come from the receivers, so the poll only bounds how soon the driver moves on."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            failures.append(f"timed out waiting for {what}")
            return False
        time.sleep(poll)
    return True


def verify(receivers, low, high, label):
    ok, duplicates = True, 0
    for receiver in receivers:
        # An endpoint is sent the rows from its own `webhook.add` on, unless replayed from further back.
        missing, broken, errors, dup = receiver.check(low if low is not None else min(receiver.accepted(), default=1), high)
        duplicates += dup
        if missing or broken or errors:
            ok = False
            failures.append(f"{label}: {receiver.name} missing {missing[:10]} ({len(missing)}), broken links at {broken[:10]}, "
                            f"{len(errors)} refused deliveries")
    return ok, duplicates


def part_kill():
    board = Board("kill", args.kills + 10)
    healthy = [Receiver(board, f"r{index}") for index in range(9)]
    Receiver(board, "hang", "--hang")
    server, _ = board.serve()
    head = board.head()
    wait_until(lambda: all(head in r.accepted() for r in healthy), 120, "the receivers to catch up")
    first, last, commands, committed_first, committed_last = [], [], [], [], []
    for index in range(args.kills):
        time.sleep(random.uniform(0, 0.25))
        target = f"com.bench.p{index:05d}"
        took, exited = board.timed("plugin", "kill", target, "--reason", "bench")
        commands.append(took)

        def arrivals():
            lines = [next((line for line in r.deliveries()
                           if line.get("action") == "plugin.kill" and line.get("target") == target and line.get("status") == 200), None)
                     for r in healthy]
            return lines if None not in lines else None

        if wait_until(lambda: arrivals() is not None, 30, f"{target}'s kill at every receiver"):
            lines = arrivals()
            times = [line["received"] for line in lines]
            first.append(min(times) - exited)
            last.append(max(times) - exited)
            commit = unix(lines[0]["at"])
            committed_first.append(min(line["received_at"] for line in lines) - commit)
            committed_last.append(max(line["received_at"] for line in lines) - commit)
    ok, _ = verify(healthy, None, board.head(), "kill")
    server.kill()
    server.wait()
    print(f"kill: {len(last)} kill switches, 10 endpoints (one hangs): the row's commit to the first receiver p50 "
          f"{ms(percentile(committed_first, 0.5))} p99 {ms(percentile(committed_first, 0.99))}; to the last of 9 p50 "
          f"{ms(percentile(committed_last, 0.5))} p99 {ms(percentile(committed_last, 0.99))}")
    print(f"kill: command exit to the first receiver p50 "
          f"{ms(percentile(first, 0.5))} p99 {ms(percentile(first, 0.99))}; to the last of 9 p50 {ms(percentile(last, 0.5))} "
          f"p99 {ms(percentile(last, 0.99))}; the command itself p50 {ms(percentile(commands, 0.5))}; chains "
          f"{'ok' if ok else 'BROKEN'}")
    return percentile(committed_last, 0.99), percentile(last, 0.99)


def compare_kills(first, second, first_label, second_label):
    """The p99 ratio of two sets of kills' times, and a line: each set's p50, p90 and p99, and the three ratios."""
    levels = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)]

    def spread(times):
        return " ".join(f"{name} {ms(percentile(times, level))}" for name, level in levels)

    ratios = ", ".join(f"{name} ratio {percentile(first, level) / percentile(second, level):.2f}"
                       for name, level in reversed(levels))
    return (percentile(first, 0.99) / percentile(second, 0.99),
            f"{first_label} {spread(first)}; {second_label} {spread(second)}; {ratios}")


def part_drain():
    board = Board("drain", args.kills * 2 * args.rounds + 10)
    receivers = [Receiver(board, f"r{index}") for index in range(10)]
    token = json.loads(board.cli("access-token", "create", "--name", "bench", "--json"))["token"]
    server, port = board.serve("--admin")
    head = board.head()
    wait_until(lambda: all(head in r.accepted() for r in receivers), 120, "the receivers to catch up")
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    # Rows: plugin.enable then plugin.disable of the last plug-in, in turn (every request writes a row).
    writer_target = f"com.bench.p{args.kills * 2 * args.rounds + 9:05d}"
    next_plugin = iter(range(args.kills * 2 * args.rounds))

    def phase(label, kills_too=True):
        state = {"first": None, "last": None}

        def write_rows():
            connection = http.client.HTTPConnection("127.0.0.1", port)
            for index in range(args.rows):
                operation = "plugin.enable" if index % 2 == 0 else "plugin.disable"
                sent = time.monotonic()
                connection.request("POST", f"/api/admin/{operation}", json.dumps({"env": "default", "id": writer_target}),
                                   headers)
                answer = connection.getresponse()
                answer.read()
                if answer.status // 100 != 2:
                    failures.append(f"{label}: {operation} answered {answer.status}")
                    return
                if state["first"] is None:
                    state["first"] = sent
            state["last"] = time.monotonic()

        low = board.head() + 1
        writer = threading.Thread(target=write_rows)
        writer.start()
        kills = []
        for index in range(args.kills if kills_too else 0):
            kills.append(board.timed("plugin", "kill", f"com.bench.p{next(next_plugin):05d}", "--reason", "bench")[0])
            time.sleep(random.uniform(0, 0.05))
        writer.join()
        return state, low, kills

    def delivered(low, high):
        return all(all(seq in r.accepted() for seq in range(low, high + 1)) for r in receivers)

    # Rounds of the two phases, their order alternating (with, without; without, with; …) so that a change in the
    # machine's load between them weighs on both; the kills' percentiles are taken over every round's kills.
    with_kills, without_kills, with_writes, without_writes = [], [], [], []
    drain = after_writes = None
    delivering = True
    for round_index in range(args.rounds):
        for with_delivery in ([True, False] if round_index % 2 == 0 else [False, True]):
            # A control run (--control) keeps every endpoint disabled in both halves: the ratios it gives are the
            # measure's own noise on this machine.
            if with_delivery != delivering and not (args.control and with_delivery):
                for receiver in receivers:
                    board.cli("webhook", "enable" if with_delivery else "disable", receiver.name)
                delivering = with_delivery
            state, low, kills = phase("with delivery" if with_delivery else "without delivery")
            (with_kills if with_delivery else without_kills).extend(kills)
            (with_writes if with_delivery else without_writes).append(state["last"] - state["first"])
            if not with_delivery or args.control:
                continue
            high = board.head()
            if not wait_until(lambda: delivered(low, high), 300, "every receiver to hold the rows", poll=0.2):
                continue
            if round_index == 0:
                # The first round's: from its first write to when each receiver first held its last missing row.
                complete = max(max(r.accepted()[seq]["received"] for seq in range(low, high + 1)) for r in receivers)
                drain = complete - state["first"]
                after_writes = complete - state["last"]
                first_rows = high - low + 1
    if args.control:
        ratio, compared = compare_kills(with_kills, without_kills, "first half", "second half")
        print(f"drain (control: no delivery in either half): plugin kill, {len(with_kills)} each way over {args.rounds} "
              f"rounds, {compared}")
        server.kill()
        server.wait()
        return None, ratio, None, 0
    ok, _ = verify(receivers, None, high, "drain")
    # A backlog: rows written through the API while every endpoint is disabled, then sent by a fresh server once they
    # are enabled again.
    if delivering:
        for receiver in receivers:
            board.cli("webhook", "disable", receiver.name)
    backlog_low = board.head() + 1
    phase("backlog", kills_too=False)
    server.kill()
    server.wait()
    for receiver in receivers:
        board.cli("webhook", "enable", receiver.name)
    backlog_high = board.head()
    receivers_cpu = sum(cpu_seconds(r.pid) for r in receivers)
    server, _ = board.serve()
    started = time.monotonic()
    backlog = None
    if wait_until(lambda: delivered(backlog_low, backlog_high), 600, "every receiver to hold the backlog", poll=0.2):
        backlog = max(max(r.accepted()[seq]["received"] for seq in range(backlog_low, backlog_high + 1))
                      for r in receivers) - started
    backlog_ok, _ = verify(receivers, None, backlog_high, "backlog")
    serve_cpu = cpu_seconds(server.pid)
    receivers_cpu = sum(cpu_seconds(r.pid) for r in receivers) - receivers_cpu
    server.kill()
    server.wait()
    ratio, compared = compare_kills(with_kills, without_kills, "with delivery", "without")
    print(f"drain: {first_rows} rows ({args.rows} through the API in {with_writes[0]:.2f} s, and the kills) to 10 endpoints: "
          f"first row to the last endpoint holding all {drain:.2f} s ({after_writes:.2f} s after the last write); chains "
          f"{'ok' if ok else 'BROKEN'}" if drain is not None else "drain: the receivers did not get every row")
    print(f"drain: plugin kill (whole command), {len(with_kills)} each way over {args.rounds} rounds, {compared}; each "
          f"phase's {args.rows} API writes took {statistics.median(with_writes):.2f} s with delivery, "
          f"{statistics.median(without_writes):.2f} s without (medians)")
    if backlog is not None:
        print(f"drain: a backlog of {backlog_high - backlog_low + 1} rows to 10 endpoints, from serve's start (the address "
              f"printed) to the last endpoint holding all: {backlog:.2f} s "
              f"({10 * (backlog_high - backlog_low + 1) / backlog:.0f} deliveries/s); chains {'ok' if backlog_ok else 'BROKEN'}; "
              f"CPU meanwhile: serve {serve_cpu:.1f} s, the 10 receivers {receivers_cpu:.1f} s")
    return drain, ratio, backlog, backlog_high - backlog_low + 1


def part_crash():
    board = Board("crash", 10)
    token = json.loads(board.cli("access-token", "create", "--name", "bench", "--json"))["token"]
    # The backlog: R rows written through the API before any endpoint exists.
    server, port = board.serve("--admin")
    connection = http.client.HTTPConnection("127.0.0.1", port)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    for index in range(args.rows):
        operation = "plugin.enable" if index % 2 == 0 else "plugin.disable"
        connection.request("POST", f"/api/admin/{operation}", json.dumps({"env": "default", "id": "com.bench.p00009"}), headers)
        connection.getresponse().read()
    server.kill()
    server.wait()
    receivers = [Receiver(board, f"r{index}") for index in range(10)]
    for receiver in receivers:
        board.cli("webhook", "replay", receiver.name, "--from", "1")
    stop = threading.Event()

    def write_live():
        index = 0
        while not stop.is_set():
            board.cli("plugin", "enable" if index % 2 == 0 else "disable", "com.bench.p00008")
            index += 1
            time.sleep(0.1)

    writer = threading.Thread(target=write_live)
    writer.start()
    started = time.monotonic()
    at_kill = []
    for _ in range(args.crashes):
        server, _ = board.serve()
        time.sleep(random.uniform(0.2, 1.5))
        at_kill.append(sum(len(r.accepted()) for r in receivers))
        server.send_signal(signal.SIGKILL)
        server.wait()
    stop.set()
    writer.join()
    server, _ = board.serve()
    high = board.head()
    wait_until(lambda: all(high in r.accepted() for r in receivers), 600, "every receiver to reach the head", poll=0.2)
    elapsed = time.monotonic() - started
    ok, duplicates = verify(receivers, 1, high, "crash")
    server.kill()
    server.wait()
    print(f"crash: {args.crashes} SIGKILLs of serve during delivery of {high} rows to 10 endpoints (a CLI writer adding rows): "
          f"{'nothing missing, every chain ok' if ok else 'ROWS MISSING'}; {duplicates} duplicate deliveries; "
          f"rows acknowledged at the kills {at_kill[0]}…{at_kill[-1]} of {10 * high}; {elapsed:.1f} s in all")
    return ok


def main():
    # Stopped from outside (`timeout`, a CI runner), the receivers and servers are still ended.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    for path, what in [(CLI, "build plugboard first (see the usage)"), (PYTHON, "make the standardwebhooks venv (see the usage)")]:
        if not os.path.exists(path):
            sys.exit(f"{path} is missing: {what}")
    load = os.getloadavg()[0]
    print(f"webhooks: binary {CLI}, {os.cpu_count()} CPUs, load average {load:.1f}, kills {args.kills}, rows {args.rows}, "
          f"crashes {args.crashes}, receivers at niceness {args.receiver_nice}"
          + (" under SCHED_IDLE" if args.receiver_idle else "")
          + (f", their lines under {args.receiver_folder}" if args.receiver_folder else ""))
    parts = args.only.split(",")
    summary = []
    try:
        if "kill" in parts:
            from_commit, from_exit = part_kill()
            summary.append(f"kill p99 to all healthy receivers {ms(from_commit)} from the commit, {ms(from_exit)} from the "
                           f"command's exit (goal < 250 ms)")
        if "drain" in parts:
            drain, ratio, backlog, backlog_rows = part_drain()
            if args.control:
                summary.append(f"control: kill p99 first half/second half {ratio:.2f}")
            else:
                summary.append(f"{args.rows} rows to 10 endpoints in {drain:.2f} s (goal < 10 s)" if drain is not None else "drain failed")
                if backlog is not None:
                    summary.append(f"a backlog of {backlog_rows} rows to 10 endpoints in {backlog:.2f} s")
                summary.append(f"kill p99 with/without delivery {ratio:.2f} (goal ≈ 1)")
        if "crash" in parts:
            summary.append(f"{args.crashes} crashes: {'0 events lost' if part_crash() else 'EVENTS LOST'}")
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    for failure in failures:
        print("FAILED:", failure)
    # The scratch boards and the receivers' lines stay for a look when something failed.
    for folder in folders if not failures else []:
        shutil.rmtree(folder, ignore_errors=True)
    if failures:
        print("the boards and the receivers' lines:", " ".join(folders))
    print("webhooks: " + "; ".join(summary))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
