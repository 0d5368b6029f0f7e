"""stress: Plugboard's stress suite.

Runs real `plugboard` and `plugboard-test-host` processes on scratch boards in a temporary folder:

  1. concurrency  four CLI writers and four hosts on one board for a bounded time
  2. crashes      writers (keys rotate and register --artifact included) killed with SIGKILL at random moments
  3. hostile      bounded fuzzing of manifests, version ranges, flag import, evaluation contexts, REGEX constraints
  4. tampering    edits behind the CLI's back that audit verify or the relevant command must detect
  5. hard         a read-only board, a full disk (RLIMIT_FSIZE), a board made by a newer version
  6. floods       `plugboard serve` flooded with SDK metrics of invented applications and flags, load reports of invented
                  hosts (5,000 entries each), 1 MiB bodies it refuses (no token, over the limit) and snapshot requests
                  naming 500 random plug-ins, while `plugin kill` and `revive` run and a remote host follows them
  7. replay       a proxy (the drill snapshot-proxy) keeps the snapshot a first host read; the plug-in is killed; new
                  hosts with empty caches get that snapshot replayed past its 2 s lifetime (with its own freshness
                  proof, with the proof the server gives now, or without one): none may load the killed plug-in, and
                  each takes the board's real state once the proxy lets it through
  8. lockout      `plugboard serve --admin` flooded with unknown access tokens from 127.0.0.1 (on reads and on the kill
                  switches' route) and, from a principal who holds no role, registrations of 60 MiB announced, while a
                  valid admin token kills and revives a plug-in through the CLI's `--server`: every kill must succeed
                  (failures are limited, never an address) and every no-rights body must be refused with 403 before
                  it is read
  9. restore-crash  a kill switch acknowledged while a host had the board open, the host then killed with SIGKILL (so
                  the kill switch is only in the -wal), then `plugboard restore` under strace with each rename, link,
                  fsync and fdatasync failed with EIO and the process killed with SIGKILL as it enters each rename,
                  link, unlink, fsync and fdatasync, in turn (--short: every rename, link and fsync, and a sample of
                  the others); after each, the board must verify and keep the kill switch, and so after the restore
                  is run again. Needs strace (skipped without it, a failure when CI is set)
 10. change-requests  `plugboard serve --admin` on a board whose production needs 2 approvals; people are OS users of
                  their own (uid:61001-61004, no passwd entry, through setpriv, as the tests' People.swift): alice,
                  bob, carol and dave each act with tokens whose chain starts with a token their OS user made as
                  themselves, puppet with tokens root made for it (root's), sock with tokens alice's tokens made for it
                  (alice's). For 30 s (--short; 120 s otherwise) threads open requests (plugin enable, pin, unpin;
                  disable applies at once), approve them, apply them (`change apply`), revoke tokens (most often an
                  approver's), remove and grant again admin, owner and maintainer roles, and make new tokens. Then, from
                  the audit log replayed (roles, `access-token.revoke`, `change.approve`, `change.apply`) and the
                  access tokens' chains: every applied request had, at its `change.apply` row, at least its `required`
                  approvals by distinct people other than its author's person, each with a token none of whose chain
                  was revoked and by a principal holding the right (an admin, or an owner or maintainer of the
                  plug-in). Needs root and setpriv (skipped without them, as the tests that need people are)

Usage: Tools/Drills/drill stress [--short] [--seed N] [--only NAME[,NAME...]] [--keep]

Binaries: $PLUGBOARD_BIN and $PLUGBOARD_TEST_HOST, else <repo>/.build/debug/{plugboard,plugboard-test-host}
(built with `swift build` when missing). Python 3 standard library only.

The floods scenario prints a line of its own before the last one:
  floods: plugin kill p99 … ms under telemetry flood (…), kill to remote host p50 … ms (before … ms), server peak RSS … MiB,
  /health p99 … ms (…), board grew … KiB, telemetry file … MiB
and the lockout scenario one of its own:
  lockout: plugin kill p99 … ms through the operations API (…) under N unknown tokens from 127.0.0.1 (… answered 429) and
  M no-rights 60 MiB bodies (… refused unread with 403); server peak RSS … MiB
and the change-requests scenario one of its own (each violation is also a failure):
  change-requests: N requests, A applied, R refused applies, V violations

The last line is always
  stress: N operations, K processes killed, F hostile inputs, L lost writes, C corrupt boards, X crashes
and the exit status is non-zero when L, C or X is not 0, when an input hung, or when any check failed (each
failure is printed on a line of its own above the last line).
"""

import argparse
import hashlib
import json
import multiprocessing
import os
import queue
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time

from plugboard_drills import common
from plugboard_drills.common import CRASH_MARKERS, DrillError, event_is, one_line, percentile, process_memory

DRILLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------------------------------------------------------
# Bookkeeping


class Stats(common.Report):
    """The figures of the last line, and every failure (printed one a line). Thread-safe."""

    def __init__(self):
        super().__init__("stress")
        self.operations = 0
        self.killed = 0
        self.hostile = 0
        self.lost = 0
        self.corrupt = 0
        self.crashes = 0
        self.hangs = 0

    def add(self, field, amount=1):
        with self.lock:
            setattr(self, field, getattr(self, field) + amount)

    def failure_line(self, message, scenario=None):
        return f"FAIL [{scenario}] {one_line(message)}"

    def fail(self, scenario, message, field=None):
        """A failure of `scenario`, counted in `field` (lost, corrupt, crashes, hangs) when given."""
        super().fail(message, scenario)
        if field:
            self.add(field)

    def summary(self):
        return (f"stress: {self.operations} operations, {self.killed} processes killed, {self.hostile} hostile inputs, "
                f"{self.lost} lost writes, {self.corrupt} corrupt boards, {self.crashes} crashes")


STATS = Stats()
log = STATS.log


def detail(message):
    """Printed with STRESS_VERBOSE=1: what each refusal said."""
    if os.environ.get("STRESS_VERBOSE"):
        log(message)


def refusal(error, limit):
    """A refused command's error on one line, without the warnings printed before it (the shared boards' mode)."""
    return one_line("\n".join(line for line in str(error).splitlines() if not line.startswith("warning: ")), limit)


# ---------------------------------------------------------------------------------------------------------------
# Running processes


def run(args, **options):
    """common.run, counted as one operation."""
    STATS.add("operations")
    return common.run(args, **options)


class Board(common.Board):
    """A scratch board made with `plugboard init` in a folder of its own, each process counted as an operation; and
    what SQLite says of it."""

    def __init__(self, root, name, env_extra=None, preexec_fn=None):
        super().__init__(os.path.join(root, name, "board.sqlite"), BIN, env_extra=env_extra, preexec_fn=preexec_fn,
                         counted=lambda: STATS.add("operations"))

    def integrity(self):
        connection = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=30)
        try:
            return connection.execute("PRAGMA integrity_check").fetchone()[0]
        finally:
            connection.close()

    def dump(self):
        """A logical dump (Python sqlite3 iterdump), to tell whether a command changed the board."""
        connection = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=30)
        try:
            return list(connection.iterdump())
        finally:
            connection.close()

    def sql(self, *statements):
        connection = sqlite3.connect(self.path, timeout=30)
        try:
            for statement in statements:
                connection.executescript(statement)
            connection.commit()
        finally:
            connection.close()


def check_board(board, scenario, stats_field="corrupt"):
    """integrity_check ok and `audit verify` exit 0; each failure counts as a corrupt board. Returns ok."""
    ok = True
    try:
        integrity = board.integrity()
    except sqlite3.Error as error:
        integrity = f"cannot open: {error}"
    if integrity != "ok":
        STATS.fail(scenario, f"PRAGMA integrity_check on {board.path}: {integrity}", stats_field)
        ok = False
    verify = board.cli("audit", "verify")
    if verify.crashed():
        STATS.fail(scenario, f"crash: {verify.describe()}", "crashes")
        ok = False
    elif verify.code != 0:
        STATS.fail(scenario, f"audit verify failed on {board.path}: {verify.describe()}", stats_field if ok else None)
        ok = False
    return ok


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def file_sha256(path):
    with open(path, "rb") as handle:
        return sha256(handle.read())


# ---------------------------------------------------------------------------------------------------------------
# 1. Concurrency: four CLI writers and four hosts on one board


def concurrency_host(board, index, plugin):
    """A host of the board file counting `plugin`'s calls."""
    STATS.add("operations")
    name = f"stress-host-{index}"
    return common.Host(TEST_HOST, [*common.board_host(board, name, [plugin]), "--counting", plugin], env=board.env,
                       name=name)


class Writer:
    """One CLI writer: a loop of commands on plug-ins and flags of its own; remembers every write that exited 0."""

    def __init__(self, board, index, rng, deadline, hosts=None, host_plugin=None):
        self.board, self.index, self.rng, self.deadline = board, index, rng, deadline
        self.hosts, self.host_plugin = hosts or [], host_plugin
        self.plugins = {}  # id -> {"versions": [..], "enabled": bool, "killed": bool}
        self.flags = {}  # name -> enabled
        self.secrets = {}  # (id, key) -> bytes
        self.kill_rounds = 0
        self.writes = 0

    def command(self, *args, stdin=None):
        result = self.board.cli(*args, stdin=stdin)
        if result.crashed():
            STATS.fail("concurrency", f"crash: {result.describe()}", "crashes")
        elif result.busy():
            STATS.fail("concurrency", f"busy reached the user: {result.describe()}")
        elif result.timed_out:
            STATS.fail("concurrency", f"hang: {result.describe()}", "hangs")
        elif result.code != 0:
            STATS.fail("concurrency", f"write refused: {result.describe()}")
        else:
            self.writes += 1
            return True
        return False

    def run(self):
        steps = [self.register, self.register, self.toggle, self.kill_or_revive, self.flag, self.secret, self.secret,
                 self.rotate_data_key]
        last_kill = time.monotonic()
        while time.monotonic() < self.deadline:
            if self.hosts and time.monotonic() - last_kill > 2.0:
                self.host_kill_round()
                last_kill = time.monotonic()
            else:
                self.rng.choice(steps)()

    def own_plugin(self):
        return self.rng.choice(sorted(self.plugins)) if self.plugins else None

    def register(self):
        if not self.plugins or self.rng.random() < 0.4:
            plugin = f"com.stress.w{self.index}.p{len(self.plugins)}"
            if self.command("plugin", "register", self.board.manifest(plugin, "1.0.0")):
                self.plugins[plugin] = {"versions": ["1.0.0"], "enabled": False, "killed": False}
        else:
            plugin = self.own_plugin()
            version = f"1.{len(self.plugins[plugin]['versions'])}.0"
            if self.command("plugin", "register", self.board.manifest(plugin, version)):
                self.plugins[plugin]["versions"].append(version)

    def toggle(self):
        plugin = self.own_plugin()
        if plugin:
            enable = self.rng.random() < 0.5
            if self.command("plugin", "enable" if enable else "disable", plugin):
                self.plugins[plugin]["enabled"] = enable

    def kill_or_revive(self):
        plugin = self.own_plugin()
        if plugin:
            if self.plugins[plugin]["killed"]:
                if self.command("plugin", "revive", plugin, "--reason", "stress"):
                    self.plugins[plugin]["killed"] = False
            elif self.command("plugin", "kill", plugin, "--reason", "stress"):
                self.plugins[plugin]["killed"] = True

    def flag(self):
        if not self.flags or self.rng.random() < 0.4:
            name = f"stress.w{self.index}.f{len(self.flags)}"
            if self.command("flag", "create", name):
                self.flags[name] = False
        else:
            name = self.rng.choice(sorted(self.flags))
            enable = not self.flags[name]
            if self.command("flag", "enable" if enable else "disable", name):
                self.flags[name] = enable

    def secret(self):
        plugin = self.own_plugin()
        if plugin:
            key = f"k{self.rng.randrange(3)}"
            value = bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(1, 200)))
            if self.command("secret", "set", "--plugin", plugin, key, "--from-file", "-", stdin=value):
                self.secrets[(plugin, key)] = value

    def rotate_data_key(self):
        plugin = self.own_plugin()
        if plugin and any(p == plugin for p, _ in self.secrets):
            self.command("keys", "rotate", "--plugin", plugin, *(["--reencrypt"] if self.rng.random() < 0.5 else []))

    def host_kill_round(self):
        """Kill the plug-in every host has loaded; each host must report its deactivation; then revive it."""
        self.kill_rounds += 1
        mark = time.time()
        if not self.command("plugin", "kill", self.host_plugin, "--reason", f"stress round {self.kill_rounds}"):
            return
        deadline = time.monotonic() + 30
        for host in self.hosts:
            seen = host.first(event_is("deactivated", self.host_plugin, reason="killed"), mark,
                              max(0.0, deadline - time.monotonic()))
            if seen is None:
                STATS.fail("concurrency", f"{host.name} did not report the kill switch of round {self.kill_rounds} on "
                                          f"{self.host_plugin} within 30 s")
        mark = time.time()
        if not self.command("plugin", "revive", self.host_plugin, "--reason", "stress"):
            return
        deadline = time.monotonic() + 30
        for host in self.hosts:
            seen = host.first(event_is("loaded", self.host_plugin), mark, max(0.0, deadline - time.monotonic()))
            if seen is None:
                STATS.fail("concurrency", f"{host.name} did not load {self.host_plugin} again within 30 s after "
                                          f"revive round {self.kill_rounds}")


def verify_writes(board, writers, scenario):
    """Every write that exited 0 is on the board: plug-ins, versions, enablement, kill switches, flags, secrets."""
    try:
        listed = {row["id"]: row for row in board.json("plugin", "list")}
        flags = {row["name"]: row for row in board.json("flag", "list")}
    except DrillError as error:
        STATS.fail(scenario, f"cannot list the board: {error}")
        return
    for writer in writers:
        for plugin, expected in writer.plugins.items():
            row = listed.get(plugin)
            if row is None:
                STATS.fail(scenario, f"lost write: plug-in {plugin} registered (exit 0) but not listed", "lost")
                continue
            if row["version_count"] != len(expected["versions"]) or row["latest_version"] != expected["versions"][-1]:
                STATS.fail(scenario, f"lost write: {plugin} has {row['version_count']} versions (latest "
                                     f"{row['latest_version']}), expected {expected['versions']}", "lost")
            if bool(row["enabled"]) != expected["enabled"]:
                STATS.fail(scenario, f"lost write: {plugin} enabled={row['enabled']}, last enable/disable said "
                                     f"{expected['enabled']}", "lost")
            if bool(row["killed"]) != expected["killed"]:
                STATS.fail(scenario, f"lost write: {plugin} killed={row['killed']}, last kill/revive said "
                                     f"{expected['killed']}", "lost")
        for name, enabled in writer.flags.items():
            row = flags.get(name)
            if row is None:
                STATS.fail(scenario, f"lost write: flag {name} created (exit 0) but not listed", "lost")
            elif bool(row["enabled"]) != enabled:
                STATS.fail(scenario, f"lost write: flag {name} enabled={row['enabled']}, expected {enabled}", "lost")
        listed_secrets = {}
        for plugin, key in writer.secrets:
            if plugin not in listed_secrets:
                try:
                    listed_secrets[plugin] = {row["key"] for row in board.json("secret", "list", "--plugin", plugin)}
                except DrillError as error:
                    STATS.fail(scenario, f"secret list: {error}")
                    listed_secrets[plugin] = set()
        for (plugin, key), value in writer.secrets.items():
            if key not in listed_secrets[plugin]:
                STATS.fail(scenario, f"lost write: secret {plugin}/{key} not in secret list", "lost")
            got = board.cli("secret", "get", "--plugin", plugin, key)
            if got.code != 0:
                STATS.fail(scenario, f"secret {plugin}/{key} unreadable: {got.describe()}", "lost")
            elif got.out != value:
                STATS.fail(scenario, f"lost write: secret {plugin}/{key} holds {len(got.out)} bytes "
                                     f"{sha256(got.out)[:12]}, last set wrote {len(value)} bytes {sha256(value)[:12]}",
                           "lost")


def scenario_concurrency(root, short, rng):
    scenario = "concurrency"
    seconds = 25 if short else 120
    board = Board(root, "concurrency").init()
    host_plugin = "com.stress.hosted"
    for result in (board.register(host_plugin, "1.0.0", capabilities=["secure-storage", "flags"]),
                   board.cli("plugin", "enable", host_plugin)):
        if result.code != 0:
            STATS.fail(scenario, f"setup: {result.describe()}")
            return
    hosts = [concurrency_host(board, index, host_plugin) for index in range(4)]
    deadline = time.monotonic() + 60
    for host in hosts:
        if host.first(event_is("loaded", host_plugin), 0, max(0.0, deadline - time.monotonic())) is None:
            STATS.fail(scenario, f"{host.name} did not load {host_plugin} within 60 s: {host.all_events()[-3:]}")
    deadline = time.monotonic() + seconds
    writers = [Writer(board, index, random.Random(rng.random()), deadline,
                      hosts=hosts if index == 0 else None, host_plugin=host_plugin) for index in range(4)]
    threads = [threading.Thread(target=writer.run) for writer in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for host in hosts:
        code = host.stop(60)
        error = host.stderr
        if code is None:
            STATS.fail(scenario, f"{host.name} did not stop within 60 s after its stdin closed", "hangs")
        elif code != 0 or any(marker in error for marker in CRASH_MARKERS):
            STATS.fail(scenario, f"{host.name} exit {code}: {one_line(error[-300:])}", "crashes")
        lowered = error.lower()
        if "database is locked" in lowered or "busy" in lowered:
            busy_lines = [line for line in error.splitlines() if "locked" in line.lower() or "busy" in line.lower()]
            STATS.fail(scenario, f"{host.name} logged busy: {one_line(busy_lines[0])}")
        failed = [e for e in host.all_events() if e.get("event") in ("failed", "garbage")]
        if failed:
            STATS.fail(scenario, f"{host.name} reported {failed[0]}")
    verify_writes(board, writers, scenario)
    check_board(board, scenario)
    log(f"concurrency: {sum(w.writes for w in writers)} writes by 4 writers and 4 hosts in {seconds} s, "
        f"{writers[0].kill_rounds} kill switch rounds seen by every host")


# ---------------------------------------------------------------------------------------------------------------
# 2. Crashes: kill -9 writers at random moments


class CrashModel:
    """What the crash board must hold: definite facts from commands that finished, alternatives from killed ones."""

    def __init__(self, board):
        self.board = board
        self.versions = {}  # (plugin, version) -> artifact sha256 or None; None key = maybe
        self.maybe_versions = {}  # (plugin, version) -> artifact sha256
        self.secrets = {}  # (plugin, key) -> set of acceptable values (one when definite)
        self.flags = set()
        self.maybe_flags = set()
        self.killed = {}  # plugin -> set of acceptable killed states
        self.next_minor = 1
        self.counter = 0


def scenario_crashes(root, short, rng):
    scenario = "crashes"
    batches, per_batch = (8, 10) if short else (80, 10)
    board = Board(root, "crashes").init()
    model = CrashModel(board)
    plugins = ["com.stress.crash.a", "com.stress.crash.b"]
    for plugin in plugins:
        if board.register(plugin, "1.0.0").code != 0:
            STATS.fail(scenario, f"setup: cannot register {plugin}")
            return
        model.versions[(plugin, "1.0.0")] = None
        model.killed[plugin] = {False}
        for key in ("k0", "k1"):
            value = os.urandom(32)
            board.cli("secret", "set", "--plugin", plugin, key, "--from-file", "-", stdin=value)
            model.secrets[(plugin, key)] = {value}
    artifact_sizes = (64 * 1024, 1024 * 1024, 8 * 1024 * 1024)
    killed_total = 0
    for batch in range(batches):
        for _ in range(per_batch):
            killed_total += crash_one(board, model, rng, artifact_sizes)
        crash_check(board, model, scenario, batch)
    log(f"crashes: {batches * per_batch} writers started, {killed_total} killed mid-way with SIGKILL, "
        f"{len(model.versions)} versions and {len(model.secrets)} secrets checked after each of {batches} batches")


def crash_one(board, model, rng, artifact_sizes):
    """Start one writer, SIGKILL it after 0-200 ms; update the model. Returns 1 when it was killed mid-way."""
    model.counter += 1
    plugin = rng.choice(["com.stress.crash.a", "com.stress.crash.b"])
    kind = rng.choice(["register", "register", "secret", "secret", "rotate", "rotate-data", "flag", "kill"])
    stdin = None
    if kind == "register":
        version = f"1.{model.next_minor}.0"
        model.next_minor += 1
        data = os.urandom(rng.choice(artifact_sizes))
        artifact = board.write_file(f"artifact-{model.counter}.so", data)
        args = ["plugin", "register", board.manifest(plugin, version), "--artifact", artifact]
        outcome = ("version", (plugin, version), sha256(data))
    elif kind == "secret":
        key = rng.choice(["k0", "k1", "k2"])
        stdin = os.urandom(rng.randrange(1, 4096))
        args = ["secret", "set", "--plugin", plugin, key, "--from-file", "-"]
        outcome = ("secret", (plugin, key), stdin)
    elif kind == "rotate":
        args = ["keys", "rotate"]
        outcome = None
    elif kind == "rotate-data":
        args = ["keys", "rotate", "--plugin", plugin, "--reencrypt"]
        outcome = None
    elif kind == "flag":
        name = f"stress.crash.f{model.counter}"
        args = ["flag", "create", name]
        outcome = ("flag", name, None)
    else:
        to_kill = rng.random() < 0.5
        args = ["plugin", "kill" if to_kill else "revive", plugin, "--reason", "stress"]
        outcome = ("killed", plugin, to_kill)
    proc = board.start(*args)
    if stdin is not None:
        try:
            proc.stdin.write(stdin)
        except OSError:
            pass
    try:
        proc.stdin.close()
    except OSError:
        pass
    proc.stdin = None  # closed: communicate() must not flush it
    time.sleep(rng.uniform(0, 0.2))
    was_running = proc.poll() is None
    if was_running:
        proc.send_signal(signal.SIGKILL)
        STATS.add("killed")
    out, err = proc.communicate()
    result = common.Result([BIN, *args], proc.returncode, out, err, False, 0)
    if not was_running:
        if result.crashed():
            STATS.fail("crashes", f"crash: {result.describe()}", "crashes")
        elif result.code != 0 and not key_next_pending(result):
            STATS.fail("crashes", f"write refused: {result.describe()}")
    finished = not was_running and result.code == 0
    if key_next_pending(result):
        finish_master_rotation(board, result)
    if outcome is None:
        return int(was_running)
    what, key, value = outcome
    if what == "version":
        (model.versions if finished else model.maybe_versions)[key] = value
    elif what == "secret":
        model.secrets[key] = {value} if finished else model.secrets.get(key, {None}) | {value}
    elif what == "flag":
        (model.flags if finished else model.maybe_flags).add(key)
    elif what == "killed":
        model.killed[key] = {value} if finished else model.killed[key] | {value}
    return int(was_running)


def key_next_pending(result):
    return ".key.next" in result.error


def finish_master_rotation(board, result):
    """A master-key rotation killed after its transaction: do exactly what the CLI's message says
    (`mv <board>.key.next <board>.key`), and print the message whole."""
    pending = board.key_file + ".next"
    told = f"mv {pending} {board.key_file}" in result.error
    detail(f"crashes: the CLI reports an interrupted master key rotation: {one_line(result.error, 2000)}")
    if told and os.path.exists(pending):
        os.replace(pending, board.key_file)
    elif f"remove {pending}" in result.error and os.path.exists(pending):
        os.remove(pending)  # killed before its transaction: the board never used that key


def crash_check(board, model, scenario, batch):
    # A command that needs the master key first, so that an interrupted master-key rotation is reported and
    # finished as the CLI says (`keys list` does not open the key).
    probe = board.cli("secret", "get", "--plugin", "com.stress.crash.a", "k0")  # opens the master key
    if key_next_pending(probe):
        finish_master_rotation(board, probe)
    if not check_board(board, scenario):
        return
    try:
        listed = {}
        for plugin in ("com.stress.crash.a", "com.stress.crash.b"):
            shown = board.json("plugin", "show", plugin)
            for version in shown["versions"]:
                listed[(plugin, version["version"])] = version.get("artifact_sha256")
            listed_kill = any(switch.get("revoked_at") is None and switch.get("revived_at") is None
                              for switch in shown.get("kill_switches", []))
            state = {row["id"]: row for row in board.json("plugin", "list")}[plugin]["killed"]
            if bool(state) not in model.killed[plugin]:
                STATS.fail(scenario, f"batch {batch}: {plugin} killed={state}, expected one of {model.killed[plugin]}",
                           "lost")
            model.killed[plugin] = {bool(state)}
            del listed_kill
        flags = {row["name"] for row in board.json("flag", "list")}
    except DrillError as error:
        STATS.fail(scenario, f"batch {batch}: {error}", "corrupt")
        return
    for key, digest in model.versions.items():
        if key not in listed:
            STATS.fail(scenario, f"lost write: {key[0]}@{key[1]} registered (exit 0) but not listed", "lost")
        elif listed[key] != digest:
            STATS.fail(scenario, f"{key[0]}@{key[1]} digest {listed[key]}, registered {digest}", "corrupt")
    for key, digest in list(model.maybe_versions.items()):
        if key in listed:
            if listed[key] != digest:
                STATS.fail(scenario, f"half-made version {key[0]}@{key[1]}: digest {listed[key]}, artifact {digest}",
                           "corrupt")
            model.versions[key] = digest
        del model.maybe_versions[key]
    for key in listed:
        if key not in model.versions:
            STATS.fail(scenario, f"{key[0]}@{key[1]} listed but never registered", "corrupt")
    for (plugin, version), digest in model.versions.items():
        if digest:
            path = os.path.join(board.artifacts, "sha256", digest)
            if not os.path.exists(path):
                STATS.fail(scenario, f"{plugin}@{version}: artifact file {path} missing", "corrupt")
            elif file_sha256(path) != digest:
                STATS.fail(scenario, f"{plugin}@{version}: artifact file {path} does not match its digest", "corrupt")
    for name in model.flags - flags:
        STATS.fail(scenario, f"lost write: flag {name} created (exit 0) but not listed", "lost")
    model.flags |= model.maybe_flags & flags
    model.maybe_flags.clear()
    for (plugin, key), values in model.secrets.items():
        got = board.cli("secret", "get", "--plugin", plugin, key)
        value = got.out if got.code == 0 else None
        if got.code != 0 and "not found" not in got.error and "no secret" not in got.error:
            STATS.fail(scenario, f"batch {batch}: secret {plugin}/{key} unreadable: {got.describe()}", "corrupt")
        elif value not in values:
            STATS.fail(scenario, f"batch {batch}: secret {plugin}/{key} holds a value no command wrote "
                                 f"({len(value or b'')} bytes {sha256(value or b'')[:12]})", "lost")
        else:
            model.secrets[(plugin, key)] = {value}
    tmp = os.path.join(board.artifacts, "tmp")
    leftovers = os.listdir(tmp) if os.path.isdir(tmp) else []
    if len(leftovers) > 1:  # the next staging removes those of dead processes; one may be left by the last kill
        STATS.fail(scenario, f"batch {batch}: {len(leftovers)} staged artifact copies left in {tmp}")


# ---------------------------------------------------------------------------------------------------------------
# 3. Hostile input


def hostile_check(board, label, result, before, allow_change):
    """Good: exit 0 (when allowed), or exit 1 with one line of stderr starting 'error: ' and the board unchanged."""
    STATS.add("hostile")
    scenario = "hostile"
    if result.timed_out:
        STATS.fail(scenario, f"hang (over {HOSTILE_TIMEOUT:.0f} s): {label}: {result.describe()}", "hangs")
        return None
    if result.crashed():
        STATS.fail(scenario, f"crash: {label}: {result.describe()}", "crashes")
        return None
    after = board.dump()
    if result.code == 0 and allow_change:
        return after
    if result.code == 0:
        if after != before:
            STATS.fail(scenario, f"{label}: exit 0 changed the board: {result.describe()}")
        return after
    lines = result.error.splitlines()
    if result.code != 1 or len(lines) != 1 or not lines[0].startswith("error: ") or not clear_sentence(lines[0]):
        STATS.fail(scenario, f"{label}: not one clear error: {result.describe()} ({len(lines)} stderr lines)")
    if after != before:
        added = set(after) - set(before)
        removed = set(before) - set(after)
        refused_rows = all(line.startswith('INSERT INTO "audit_log"') and "'refused'" in line for line in added)
        if removed or not refused_rows:
            STATS.fail(scenario, f"{label}: a refused command changed the board: {result.describe()} "
                                 f"(+{len(added)} -{len(removed)} dump lines)", "corrupt")
    return after


HOSTILE_TIMEOUT = 10.0
HOSTILE_VALUES = [
    None, True, 0, -1, 1e308, 10 ** 40, -(10 ** 40), 1.5, "", " ", "\u0000", "\x1b[31mred", "a\nb", "\u202e", "\u200b",
    "é" * 3, "🙂", "x" * 70000, [], {}, [[[[]]]], {"a": {"b": {"c": []}}}, "0", "1.0.0", "NaN", "-0",
    "\ud800", "%s%n", "../../etc/passwd", "com.example", "1" * 400,
]
RANGE_PIECES = ["1", "1.2", "1.2.3", "1.2.3-rc.1", "1.2.3+b", "x", "*", "X", "^", "~", ">=", "<=", ">", "<", "=",
                "||", " - ", " ", "  ", "-", ".", "0", "01", "99999999999999999999", "v", "1.x", "1.2.*", "a", "\t",
                "2.0.0-", "1.2.3-a..b", "^0.0", "~>", "!", "("]


def random_range(rng):
    return "".join(rng.choice(RANGE_PIECES) for _ in range(rng.randrange(1, 9)))


def mutate_json_value(rng, value, depth=0):
    """Replace, drop or add one thing somewhere in a JSON value."""
    if isinstance(value, dict) and value and rng.random() < 0.7:
        key = rng.choice(sorted(value))
        choice = rng.random()
        if choice < 0.15:
            del value[key]
        elif choice < 0.3:
            value[rng.choice(["id", "version", "x", "", "\u0000", "constraints", "strategies"])] = rng.choice(
                HOSTILE_VALUES)
        elif choice < 0.5 or not isinstance(value[key], (dict, list)):
            value[key] = rng.choice(HOSTILE_VALUES)
        else:
            value[key] = mutate_json_value(rng, value[key], depth + 1)
        return value
    if isinstance(value, list) and value and rng.random() < 0.7:
        index = rng.randrange(len(value))
        value[index] = mutate_json_value(rng, value[index], depth + 1) if rng.random() < 0.6 else rng.choice(
            HOSTILE_VALUES)
        return value
    return rng.choice(HOSTILE_VALUES)


def mutate_bytes(rng, data):
    data = bytearray(data)
    for _ in range(rng.randrange(1, 6)):
        if not data:
            break
        choice = rng.random()
        position = rng.randrange(len(data))
        if choice < 0.3:
            data[position] = rng.randrange(256)
        elif choice < 0.5:
            del data[position:position + rng.randrange(1, 10)]
        elif choice < 0.7:
            data[position:position] = rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x00", b"\x1b[2J", b"{",
                                                  b"[", b"\"", b"\\u0000", b"\\ud800", b"1e99999", b",,"])
        else:
            start = rng.randrange(len(data))
            data[position:position] = data[start:start + rng.randrange(1, 40)]
    return bytes(data)


def duplicate_key(document, key, value):
    text = json.dumps(document)
    return (text[:-1] + f', {json.dumps(key)}: {json.dumps(value)}}}').encode()


def hostile_manifests(rng, count):
    """(label, bytes) manifests: mutated, structural extremes, and version ranges."""
    base = {"id": "com.stress.fuzz", "name": "Fuzz", "version": "1.0.0", "description": "fuzz",
            "host": ">=1.0.0 <3.0.0", "dependencies": {"com.stress.dep": "^1.2"},
            "capabilities": ["secure-storage", "flags"], "gate": "fuzz.gate", "entry": "plugboard_plugin_entry",
            "metadata": {"team": "stress"}}
    fixed = [
        ("deep nesting 100k", b'{"id":"com.stress.deep","name":"D","version":"1.0.0","metadata":' + b"[" * 100000
         + b"]" * 100000 + b"}"),
        ("deep nesting objects", b'{"metadata":' + b'{"a":' * 50000 + b"1" + b"}" * 50000 + b"}"),
        ("huge number", b'{"id":"com.stress.num","name":"N","version":"1.0.0","metadata":{"n":'
         + b"9" * 5000 + b"}}"),
        ("huge exponent", b'{"id":"com.stress.num","name":"N","version":"1.0.0","metadata":{"n":1e999999999}}'),
        ("invalid utf-8", b'{"id":"com.stress.utf","name":"\xff\xfe\xc3\x28","version":"1.0.0"}'),
        ("lone surrogate", b'{"id":"com.stress.utf","name":"\\ud800","version":"1.0.0"}'),
        ("duplicate id", duplicate_key({"id": "com.stress.dup", "name": "D", "version": "1.0.0"}, "id",
                                       "com.stress.other")),
        ("duplicate escaped", b'{"id":"com.stress.dup","name":"D","version":"1.0.0","\\u0069d":"com.stress.x"}'),
        ("newline name", json.dumps({"id": "com.stress.nl", "name": "a\nb", "version": "1.0.0"}).encode()),
        ("escape name", json.dumps({"id": "com.stress.esc", "name": "\x1b[31mred", "version": "1.0.0"}).encode()),
        ("bidi name", json.dumps({"id": "com.stress.bidi", "name": "a\u202eb", "version": "1.0.0"}).encode()),
        ("nul in id", b'{"id":"com.stress\\u0000.nul","name":"N","version":"1.0.0"}'),
        ("build metadata twin", json.dumps({"id": "com.stress.fuzz", "name": "F", "version": "1.0.0+build.9"}).encode()),
        ("empty", b""),
        ("not an object", b"[1,2,3]"),
        ("bom", b"\xef\xbb\xbf" + json.dumps({"id": "com.stress.bom", "name": "B", "version": "1.0.0"}).encode()),
        ("2 MiB", b'{"id":"com.stress.big","name":"B","version":"1.0.0","metadata":{"x":"' + b"a" * (2 << 20) + b'"}}'),
        ("self dependency", json.dumps({"id": "com.stress.self", "name": "S", "version": "1.0.0",
                                        "dependencies": {"com.stress.self": "*"}}).encode()),
        ("version overflow", json.dumps({"id": "com.stress.ovf", "name": "O",
                                         "version": "99999999999999999999999.0.0"}).encode()),
        ("range overflow", json.dumps({"id": "com.stress.ovf", "name": "O", "version": "1.0.0",
                                       "host": ">=99999999999999999999999"}).encode()),
        ("long range", json.dumps({"id": "com.stress.long", "name": "L", "version": "1.0.0",
                                   "host": " || ".join(["^1.2.3"] * 20000)}).encode()),
    ]
    for label, data in fixed:
        yield label, data
    for index in range(count):
        choice = rng.random()
        document = json.loads(json.dumps(base))
        document["version"] = f"1.{index + 1}.0"
        if choice < 0.35:
            yield f"manifest mutation {index}", json.dumps(mutate_json_value(rng, document)).encode()
        elif choice < 0.6:
            yield f"manifest bytes {index}", mutate_bytes(rng, json.dumps(document).encode())
        elif choice < 0.8:
            document["host"] = random_range(rng)
            yield f"host range {document['host']!r}", json.dumps(document).encode()
        else:
            document["dependencies"] = {"com.stress.dep": random_range(rng)}
            yield f"dependency range {document['dependencies']['com.stress.dep']!r}", json.dumps(document).encode()


def fixture_states():
    """Unleash feature documents: the conformance specification states and the differential fixtures."""
    folders = [os.path.join(common.REPO, "Tests/PlugboardFlagsTests/Fixtures/unleash-client-specification/specifications"),
               os.path.join(common.REPO, "Tests/PlugboardFlagsTests/Fixtures/differential"),
               "/work/shared/conformance/unleash-client-specification/specifications"]
    states = []
    for folder in folders:
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".json") or name == "index.json":
                continue
            with open(os.path.join(folder, name), "rb") as handle:
                try:
                    document = json.load(handle)
                except ValueError:
                    continue
            state = document.get("state", document) if isinstance(document, dict) else None
            if isinstance(state, dict) and isinstance(state.get("features"), list):
                states.append((name, state))
        if states:
            break
    return states


REDOS_PATTERNS = ["(a+)+$", "(.*a){20}", "(a|aa)+$", "(x+x+)+y", "^(a|a?)+$", "((a{1000}){1000}){1000}",
                  "(a{1,1001})", "(.*){1,1000}(.*){1,1000}b", "([a-z]+)*[0-9]$"]


def regex_features(pattern):
    return {"version": 1, "features": [{
        "name": "stress.regex", "enabled": True,
        "strategies": [{"name": "default", "constraints": [
            {"contextName": "userId", "operator": "REGEX", "value": pattern}]}]}]}


def scenario_hostile(root, short, rng):
    scenario = "hostile"
    board = Board(root, "hostile").init()
    board.register("com.stress.dep", "1.2.0")
    manifests_count, imports_count, contexts_count = (60, 40, 15) if short else (400, 250, 80)
    before = board.dump()
    for label, data in hostile_manifests(rng, manifests_count):
        path = board.write_file("hostile-manifest.json", data)
        result = board.cli("plugin", "register", path, timeout=HOSTILE_TIMEOUT)
        before = hostile_check(board, label, result, before, allow_change=True) or board.dump()
    states = fixture_states()
    if not states:
        STATS.fail(scenario, "no Unleash fixtures found (Tests/PlugboardFlagsTests/Fixtures)")
    for index in range(imports_count if states else 0):
        name, state = rng.choice(states)
        choice = rng.random()
        if choice < 0.15:
            data = json.dumps(state).encode()
            label = f"import {name}"
        elif choice < 0.55:
            data = json.dumps(mutate_json_value(rng, json.loads(json.dumps(state)))).encode()
            label = f"import mutation of {name}"
        elif choice < 0.85:
            data = mutate_bytes(rng, json.dumps(state).encode())
            label = f"import bytes of {name}"
        else:
            data = json.dumps(state)[:-1].encode() + b', "features": []}'
            label = f"import duplicate key of {name}"
        path = board.write_file("hostile-features.json", data)
        result = board.cli("flag", "import", path, timeout=HOSTILE_TIMEOUT)
        before = hostile_check(board, label, result, before, allow_change=True) or board.dump()
    # Evaluation contexts against the board's flags and against a features file.
    context_values = ["", "a" * 60000, "\u0000", "\ud800", "1.2.3", "-1", "1e400", "2026-13-45T99:99:99Z",
                      "::ffff:1.2.3.4", "300.1.1.1/33", "🙂" * 100, None, 12, [], {}]
    for index in range(contexts_count):
        lines = []
        for _ in range(rng.randrange(1, 40)):
            context = {rng.choice(["userId", "sessionId", "remoteAddress", "currentTime", "appName", "environment",
                                   "properties", "s", "x"]): rng.choice(context_values) for _ in range(3)}
            if isinstance(context.get("properties"), str):
                context["properties"] = {"p": context["properties"]}
            line = json.dumps({"toggle": rng.choice(["Feature.A", "stress.regex", "nope", "", None]),
                               "context": context}).encode()
            lines.append(mutate_bytes(rng, line) if rng.random() < 0.3 else line)
        if rng.random() < 0.1:
            lines.append(b"{" * 70000)
        result = board.cli("flag", "evaluate", "--contexts", "-", stdin=b"\n".join(lines) + b"\n",
                           timeout=HOSTILE_TIMEOUT)
        before = hostile_check(board, f"contexts batch {index}", result, before, allow_change=False) or board.dump()
    # REGEX constraints that take a backtracking engine minutes, evaluated on long inputs.
    inputs = ["a" * 28 + "!", "a" * 10000 + "!", "x" * 5000, "a" * 60000]
    for pattern in REDOS_PATTERNS:
        path = board.write_file("hostile-regex.json", json.dumps(regex_features(pattern)))
        contexts = b"".join(json.dumps({"toggle": "stress.regex", "context": {"userId": value}}).encode() + b"\n"
                            for value in inputs)
        result = board.cli("flag", "evaluate", "--features", path, "--contexts", "-", stdin=contexts,
                           timeout=HOSTILE_TIMEOUT)
        label = f"regex {pattern!r} evaluated on userIds of {', '.join(str(len(v)) for v in inputs)} characters"
        before = hostile_check(board, label, result, before, allow_change=False) or board.dump()
        result = board.cli("flag", "import", path, timeout=HOSTILE_TIMEOUT)
        before = hostile_check(board, f"regex {pattern!r} import", result, before, allow_change=True) or board.dump()
    check_board(board, scenario)
    log(f"hostile: {STATS.hostile} inputs, each within {HOSTILE_TIMEOUT:.0f} s")


# ---------------------------------------------------------------------------------------------------------------
# 4. Tampering: edits behind the CLI's back


def tamper_board(root, name):
    """A board with a plug-in (with an artifact), a kill switch revived, a flag and a secret set twice."""
    board = Board(root, f"tamper-{name}").init()
    artifact = board.write_file("artifact.so", os.urandom(4096))
    steps = [board.register("com.stress.tamper", "1.0.0", artifact=artifact),
             board.cli("plugin", "enable", "com.stress.tamper"),
             board.cli("plugin", "kill", "com.stress.tamper", "--reason", "tamper"),
             board.cli("flag", "create", "stress.tamper"),
             board.cli("secret", "set", "--plugin", "com.stress.tamper", "token", "--from-file", "-", stdin=b"old"),
             board.cli("secret", "set", "--plugin", "com.stress.tamper", "token", "--from-file", "-", stdin=b"new")]
    for step in steps:
        if step.code != 0:
            raise DrillError(f"setup: {step.describe()}")
    return board


def sealed(board):
    with sqlite3.connect(board.path) as connection:
        return connection.execute("SELECT sealed FROM secret_values WHERE key = 'token'").fetchone()[0]


def tamper_cases():
    """(name, prepare(board) -> context, detect(board, context) -> Result that must fail)."""

    def audit_verify(board, _):
        return board.cli("audit", "verify")

    def secret_get(board, _):
        return board.cli("secret", "get", "--plugin", "com.stress.tamper", "token")

    def edit_audit_row(board):
        board.sql("DROP TRIGGER audit_log_no_update",
                  "UPDATE audit_log SET actor = 'mallory' WHERE seq = 2",
                  "CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN "
                  "SELECT RAISE(ABORT, 'audit_log is append-only: rows cannot be updated'); END")

    def noop_trigger(board):
        board.sql("DROP TRIGGER audit_log_no_update",
                  "CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT 1; END")

    def delete_audit_tail(board):
        checkpoint = board.cli("audit", "checkpoint").text.strip().split()[-1]
        board.cli("flag", "enable", "stress.tamper")
        board.sql("DROP TRIGGER audit_log_no_delete",
                  "DELETE FROM audit_log WHERE seq = (SELECT max(seq) FROM audit_log)",
                  "CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN "
                  "SELECT RAISE(ABORT, 'audit_log is append-only: rows cannot be deleted'); END",
                  "UPDATE flag_environments SET enabled = 0")
        return checkpoint

    def insert_admin(board):
        board.sql("INSERT INTO admins (principal, added_at, added_by) VALUES ('mallory', '2026-01-01T00:00:00Z', 'root')")

    def revive_kill_switch(board):
        with sqlite3.connect(board.path) as connection:
            columns = [row[1] for row in connection.execute("PRAGMA table_info(kill_switches)")]
        revived = [c for c in columns if c.startswith("revived") or c.startswith("lifted")]
        if "revived_at" in columns:
            board.sql("UPDATE kill_switches SET revived_at = '2026-01-01T00:00:00Z'"
                      + (", revived_by = 'mallory'" if "revived_by" in columns else ""))
        elif revived:
            board.sql(f"UPDATE kill_switches SET {revived[0]} = '2026-01-01T00:00:00Z'")
        else:
            board.sql("DELETE FROM kill_switches")

    def enable_flag(board):
        board.sql("INSERT OR REPLACE INTO flag_environments VALUES "
                  "('stress.tamper', 'default', 1, '[]', '[]', '2026-01-01T00:00:00Z', 'mallory')")

    def swap_artifact(board):
        folder = os.path.join(board.artifacts, "sha256")
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            os.chmod(path, 0o600)
            with open(path, "wb") as handle:
                handle.write(os.urandom(4096))

    def host_load(board, _):
        """A host refuses the swapped artifact: the result fails unless it reports a digest mismatch."""
        board.cli("plugin", "revive", "com.stress.tamper")
        result = run([TEST_HOST, *common.board_host(board, "tamper", ["com.stress.other"])], stdin=b"", timeout=60,
                     env=board.env)
        skipped = [json.loads(line) for line in result.out.splitlines() if line.startswith(b"{")]
        detected = any(e.get("plugin") == "com.stress.tamper" and e.get("event") in ("skipped", "failed")
                       for e in skipped)
        loaded = any(e.get("plugin") == "com.stress.tamper" and e.get("event") == "loaded" for e in skipped)
        result.code = 1 if detected and not loaded else 0
        result.err = (b"error: " + json.dumps([e for e in skipped if e.get("plugin") == "com.stress.tamper"]).encode()
                      + b"\n" + result.err)
        return result

    def checkpoint(board):
        return board.cli("audit", "checkpoint").text.strip().split()[-1]

    def behind_the_log(*statements):
        """Edits the board behind the log after a checkpoint is taken (the checkpoint is the context)."""
        def prepare(board):
            taken = checkpoint(board)
            board.sql(*statements)
            return taken
        return prepare

    revive_sql = "UPDATE kill_switches SET revived_at = '2026-01-01T00:00:00.000Z', revived_by = 'root'"

    def verify_with_checkpoint(board, taken):
        return board.cli("audit", "verify", "--checkpoint", taken)

    def host_refuses(board, _):
        """A host of the board file must not load the killed plug-in: the result fails unless it was not loaded and the
        host said why (unproven_state)."""
        result = run([TEST_HOST, *common.board_host(board, "tamper", ["com.stress.tamper"])], stdin=b"", timeout=60,
                     env=board.env)
        events = [json.loads(line) for line in result.out.splitlines() if line.startswith(b"{")]
        loaded = any(e.get("plugin") == "com.stress.tamper" and e.get("event") == "loaded" for e in events)
        said = any(e.get("reason") == "unproven_state" for e in events)
        result.code = 1 if said and not loaded else 0
        result.err = b"error: " + json.dumps(events).encode() + b"\n" + result.err
        return result

    host_attacks = [
        ("drop the proof's table and revive the kill switch", behind_the_log("DROP TABLE state_buckets", revive_sql)),
        ("move the kill switch to another plug-in",
         behind_the_log("INSERT INTO plugins (id, name, created_at, created_by) SELECT 'com.stress.victim', name, created_at, "
                        "created_by FROM plugins", "UPDATE kill_switches SET plugin_id = 'com.stress.victim'")),
        ("drop the audit triggers, clear every state root and revive",
         behind_the_log("DROP TRIGGER audit_log_no_update", "UPDATE audit_log SET state_root = NULL, state_changes = NULL",
                        revive_sql)),
        ("append a forged audit row and revive",
         behind_the_log(revive_sql,
                        "INSERT INTO audit_log (seq, at, actor, action, outcome, target_type, target_id, state_root, "
                        "prev_hash, hash) SELECT seq + 1, at, 'root', 'plugin.revive', 'ok', 'plugin', 'com.stress.tamper', "
                        "state_root, '" + "0" * 64 + "', '" + "1" * 64 + "' FROM audit_log ORDER BY seq DESC LIMIT 1")),
    ]

    def restore_old_sealed(board):
        old = sealed(board)
        board.cli("secret", "set", "--plugin", "com.stress.tamper", "token", "--from-file", "-", stdin=b"newer")
        with sqlite3.connect(board.path) as connection:
            connection.execute("UPDATE secret_values SET sealed = ? WHERE key = 'token'", (old,))

    def flip_ciphertext(board):
        blob = bytearray(sealed(board))
        blob[-5] ^= 0x01
        with sqlite3.connect(board.path) as connection:
            connection.execute("UPDATE secret_values SET sealed = ? WHERE key = 'token'", (bytes(blob),))

    def truncate_key_file(board):
        with open(board.key_file, "r+b") as handle:
            handle.truncate(10)

    def wrong_key_file(board):
        os.chmod(board.key_file, 0o600)
        with open(board.key_file, "w") as handle:
            import base64
            handle.write(base64.b64encode(os.urandom(32)).decode() + "\n")

    def loose_key_file(board):
        os.chmod(board.key_file, 0o644)

    return [
        ("edit an audit row (trigger dropped and restored)", edit_audit_row, audit_verify),
        ("replace the append-only trigger with a no-op", noop_trigger, audit_verify),
        ("delete the audit tail and its change (checkpoint kept elsewhere)", delete_audit_tail,
         lambda board, checkpoint: board.cli("audit", "verify", "--checkpoint", checkpoint)),
        ("insert an admin", insert_admin, audit_verify),
        ("revive a kill switch", revive_kill_switch, audit_verify),
        ("enable a flag", enable_flag, audit_verify),
        ("swap an artifact file (host load)", swap_artifact, host_load),
        ("restore an old sealed secret value", restore_old_sealed, secret_get),
        ("restore an old sealed secret value (audit verify)", restore_old_sealed, audit_verify),
        ("flip a byte of a ciphertext", flip_ciphertext, secret_get),
        ("truncate the key file", truncate_key_file, secret_get),
        ("replace the key file with another key", wrong_key_file, secret_get),
        ("key file readable by others", loose_key_file, secret_get),
    ] + [
        (f"{name} ({detector})", prepare, detect)
        for name, prepare in host_attacks
        for detector, detect in [("audit verify", audit_verify), ("audit verify --checkpoint", verify_with_checkpoint),
                                 ("host load", host_refuses)]
    ]


def scenario_tampering(root, short, rng):
    scenario = "tampering"
    detected = 0
    cases = tamper_cases()
    for index, (name, prepare, detect) in enumerate(cases):
        try:
            board = tamper_board(root, str(index))
            context = prepare(board)
        except (DrillError, sqlite3.Error, OSError) as error:
            STATS.fail(scenario, f"{name}: setup failed: {error}")
            continue
        result = detect(board, context)
        message = (result.error.strip() or result.text.strip()).splitlines()
        if result.crashed():
            STATS.fail(scenario, f"{name}: crash: {result.describe()}", "crashes")
        elif result.code == 0:
            STATS.fail(scenario, f"{name}: not detected: {result.describe()}")
        elif not message or not any(line.startswith("error: ") or "error" in line.lower() for line in message):
            STATS.fail(scenario, f"{name}: detected without a clear error: {result.describe()}")
        else:
            detected += 1
            detail(f"tampering: {name}: {one_line(message[0], 200)}")
    log(f"tampering: {detected} of {len(cases)} cases detected")


# ---------------------------------------------------------------------------------------------------------------
# 5. Hard conditions


def as_user(uid, gid):
    def preexec():
        os.setgid(gid)
        os.setuid(uid)
    return preexec


def scenario_hard(root, short, rng):
    scenario = "hard"
    read_only_board(root, scenario)
    full_disk(root, scenario)
    newer_version(root, scenario)


def clear_sentence(line):
    """No raw Foundation error dumps (`Error Domain=NSCocoaErrorDomain Code=512 "(null)"UserInfo=…`)."""
    return "Error Domain=" not in line and '"(null)"' not in line


def expect_clear_error(scenario, label, result):
    lines = result.error.splitlines()
    if result.crashed():
        STATS.fail(scenario, f"{label}: crash: {result.describe()}", "crashes")
    elif result.timed_out:
        STATS.fail(scenario, f"{label}: hang: {result.describe()}", "hangs")
    elif result.code != 1 or len(lines) != 1 or not lines[0].startswith("error: "):
        STATS.fail(scenario, f"{label}: expected exit 1 and one 'error: ' line: {result.describe()}")
    elif result.busy():
        STATS.fail(scenario, f"{label}: busy reached the user: {result.describe()}")
    elif not clear_sentence(lines[0]):
        STATS.fail(scenario, f"{label}: the error is not a sentence (a raw Foundation error): {result.describe()}")
    else:
        detail(f"{label}: {one_line(lines[0], 250)}")
        return True
    return False


def read_only_board(root, scenario):
    """chmod 0440 on the board and 0555 on its folder; as root the commands run as `nobody`, whom 0440 binds."""
    preexec = None
    folder = os.path.join(root, "read-only")
    os.makedirs(folder)
    if os.geteuid() == 0:
        import pwd
        nobody = pwd.getpwnam("nobody")
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
        os.chmod(root, 0o755)
        preexec = as_user(nobody.pw_uid, nobody.pw_gid)
    board = Board(root, "read-only", env_extra={"HOME": folder}, preexec_fn=preexec).init()
    board.register("com.stress.ro", "1.0.0")
    board.cli("plugin", "enable", "com.stress.ro")
    board.cli("secret", "set", "--plugin", "com.stress.ro", "token", "--from-file", "-", stdin=b"ro")
    board.cli("flag", "create", "stress.ro")
    board.cli("audit", "checkpoint")  # the -wal is empty (and kept, as writers keep it) once every connection closed
    for name in os.listdir(board.folder):
        path = os.path.join(board.folder, name)
        if os.path.isfile(path) and name.startswith("board.sqlite"):
            os.chmod(path, 0o440 if not name.endswith(".key") else 0o400)
    os.chmod(board.folder, 0o555)
    before = board.dump()
    try:
        for args in (["plugin", "list"], ["plugin", "show", "com.stress.ro"], ["flag", "list"], ["audit", "verify"],
                     ["secret", "list", "--plugin", "com.stress.ro"]):
            result = board.cli(*args)
            if result.code != 0 or result.crashed():
                STATS.fail(scenario, f"read-only board: a read failed: {result.describe()}")
        writes = [("plugin", "kill", "com.stress.ro", "--reason", "ro"), ("plugin", "disable", "com.stress.ro"),
                  ("flag", "create", "stress.ro2"), ("plugin", "register", board.manifest("com.stress.ro", "1.1.0"))]
        for args in writes:
            expect_clear_error(scenario, f"read-only board: {' '.join(args[:2])}", board.cli(*args))
        host = run([TEST_HOST, *common.board_host(board, "ro", ["com.stress.ro"])],
                   stdin=b"", timeout=60, env=board.env, preexec_fn=preexec)
        if host.code != 0 or b'"loaded"' not in host.out:
            STATS.fail(scenario, f"read-only board: the host did not load com.stress.ro: exit {host.code} "
                                 f"{one_line(host.text[-300:])} {one_line(host.error[-300:])}")
    finally:
        os.chmod(board.folder, 0o755)
    if board.dump() != before:
        STATS.fail(scenario, "read-only board: the board changed", "corrupt")


def full_disk(root, scenario):
    """Writers under RLIMIT_FSIZE (SIGXFSZ ignored): a clear error, and an intact board after."""
    board = Board(root, "full-disk").init()
    board.register("com.stress.full", "1.0.0")
    size = os.path.getsize(board.path) + sum(
        os.path.getsize(board.path + suffix) for suffix in ("-wal",) if os.path.exists(board.path + suffix))
    limit = size + 16 * 1024

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    big = board.write_file("big-artifact.so", os.urandom(1 << 20))
    refused = 0
    for index in range(40):
        before = board.dump()
        if index % 3 == 0:
            args = ["plugin", "register", board.manifest("com.stress.full", f"1.{index + 1}.0"), "--artifact", big]
        elif index % 3 == 1:
            args = ["secret", "set", "--plugin", "com.stress.full", f"k{index}", "--from-file", "-"]
        else:
            args = ["plugin", "register", board.manifest("com.stress.full", f"1.{index + 1}.0",
                                                         metadata={"pad": "x" * 200000})]
        result = board.cli(*args, stdin=os.urandom(500000) if args[0] == "secret" else None, preexec_fn=limited)
        if result.code != 0:
            refused += 1
            if expect_clear_error(scenario, f"full disk: {' '.join(args[:2])}", result) and board.dump() != before:
                STATS.fail(scenario, f"full disk: a refused {' '.join(args[:2])} changed the board", "corrupt")
        if refused >= 5:
            break
    if refused == 0:
        STATS.fail(scenario, f"full disk: no write hit the {limit}-byte file size limit")
    check_board(board, scenario)
    if board.cli("plugin", "register", board.manifest("com.stress.full", "9.0.0")).code != 0:
        STATS.fail(scenario, "full disk: the board does not take writes once the limit is gone")


def newer_version(root, scenario):
    board = Board(root, "newer").init()
    board.register("com.stress.newer", "1.0.0")
    board.cli("audit", "checkpoint")
    board.sql("INSERT INTO schema_migrations (version, file_name, checksum, applied_at, applied_by) VALUES "
              "(9999, '9999_future.sql', '" + "0" * 64 + "', '2030-01-01T00:00:00Z', 'future')")
    before_dump = board.dump()
    with open(board.path, "rb") as handle:
        before_bytes = sha256(handle.read())
    for args in (["plugin", "list"], ["plugin", "kill", "com.stress.newer", "--reason", "newer"], ["migrate"],
                 ["flag", "create", "stress.newer"]):
        expect_clear_error(scenario, f"newer board: {' '.join(args[:2])}", board.cli(*args))
    with open(board.path, "rb") as handle:
        after_bytes = sha256(handle.read())
    if board.dump() != before_dump or before_bytes != after_bytes:
        STATS.fail(scenario, "newer board: the file changed", "corrupt")


# ---------------------------------------------------------------------------------------------------------------
# 7. Restore crashes: a restore failed or killed at each step of its swap never loses an acknowledged kill switch


RESTORE_FILES = ("board.sqlite", "board.sqlite-wal", "board.sqlite-shm", "board.sqlite.key", "backup.sqlite")


def restore_crash_board(root):
    """A board whose kill switch is only in its -wal (acknowledged while a host had the board open, then the host
    killed with SIGKILL, so nobody checkpointed it), a backup from before the kill, and a copy of those files."""
    board = Board(root, "restore-crash").init()
    plugin = "com.stress.restore"
    board.register(plugin, "1.0.0")
    board.cli("plugin", "enable", plugin)
    board.cli("backup", "--to", os.path.join(board.folder, "backup.sqlite"))
    STATS.add("operations")
    host = common.Host(TEST_HOST, common.board_host(board, "restore-crash", [plugin]), env=board.env)
    host.first(event_is("started"), timeout=60)
    killed = board.cli("plugin", "kill", plugin, "--reason", "stress restore")
    host.process.kill()
    host.process.wait()
    STATS.add("killed")
    if killed.code != 0 or os.path.getsize(board.path + "-wal") == 0:
        STATS.fail("restore-crash", f"setup: the kill switch is not only in the write-ahead log: {killed.describe()}")
        return None, None
    saved = os.path.join(board.folder, "saved")
    os.makedirs(saved)
    for name in RESTORE_FILES:
        shutil.copy2(os.path.join(board.folder, name), saved)
    return board, saved


def restore_crash_killed(board):
    """The board opens, passes integrity_check and audit verify, and has its kill switch; False (with the failure
    counted) otherwise. The connection is closed at once: the restore run next refuses while a process has the board
    open."""
    if not check_board(board, "restore-crash"):
        return False
    try:
        row = {row["id"]: row for row in board.json("plugin", "list")}.get("com.stress.restore")
    except DrillError as error:
        STATS.fail("restore-crash", str(error), "corrupt")
        return False
    if not row or not row.get("killed"):
        STATS.fail("restore-crash", f"the acknowledged kill switch is gone: {row}", "lost")
        return False
    return True


def scenario_restore_crash(root, short, rng):
    scenario = "restore-crash"
    strace = shutil.which("strace")
    if not strace:
        if os.environ.get("CI"):
            STATS.fail(scenario, "strace is missing (the CI installs it)")
        else:
            log("restore-crash: strace is missing, skipped")
        return
    board, saved = restore_crash_board(root)
    if not board:
        return
    restore = [BIN, "restore", "--from", "backup.sqlite", "--db", board.path]
    calls = {}
    names = ("rename", "link", "fsync", "fdatasync", "unlink")
    trace = os.path.join(board.folder, "trace.txt")
    baseline = run([strace, "-f", "-o", trace, "-e", "trace=" + ",".join(names), *restore], env=board.env,
                   cwd=board.folder)
    if baseline.code != 0:
        STATS.fail(scenario, f"an uninterrupted restore failed: {baseline.describe()}")
        return
    with open(trace) as handle:
        lines = handle.read().splitlines()
    for name in names:
        calls[name] = sum(1 for line in lines if f" {name}(" in line)
    cases = []
    for name in names:
        for when in range(1, calls[name] + 1):
            if name != "unlink":
                cases.append((name, "error=EIO", when))
            cases.append((name, "signal=SIGKILL", when))
    if short:  # every rename, link and fsync; a sample of SQLite's flushes and of the removals
        sampled = [case for case in cases if case[0] in ("fdatasync", "unlink")]
        cases = [case for case in cases if case[0] not in ("fdatasync", "unlink")] + rng.sample(sampled, min(4, len(sampled)))
    failed = killed = 0
    for name, how, when in cases:
        for entry in os.listdir(board.folder):
            if entry.startswith("board.sqlite") or entry.startswith(".board.sqlite") or entry == "backup.sqlite":
                os.remove(os.path.join(board.folder, entry))
        for entry in RESTORE_FILES:
            shutil.copy2(os.path.join(saved, entry), board.folder)
        attempt = run([strace, "-f", "-o", os.devnull, "-e", f"trace={name}", "-e", f"inject={name}:{how}:when={when}",
                       *restore], env=board.env, cwd=board.folder)
        label = f"{name} #{when} {how}"
        if how.startswith("signal"):
            killed += 1
            STATS.add("killed")
        elif attempt.code != 0:
            failed += 1
            if attempt.code != 1 or len(attempt.error.strip().splitlines()) != 1 or attempt.crashed():
                STATS.fail(scenario, f"{label}: not one clear sentence: {attempt.describe()}")
        if not restore_crash_killed(board):
            detail(f"restore-crash: after {label}")
            continue
        again = board.cli("restore", "--from", "backup.sqlite")
        if again.code != 0:
            STATS.fail(scenario, f"{label}: the restore run again failed: {again.describe()}")
        restore_crash_killed(board)
    log(f"restore-crash: {len(cases)} restores failed or killed at a rename, link, unlink or flush "
        f"({failed} failed with EIO and refused, {killed} killed with SIGKILL; calls of an uninterrupted restore: "
        + ", ".join(f"{name} {count}" for name, count in calls.items()) + "), each followed by verify and a restore "
        "run again")


# ---------------------------------------------------------------------------------------------------------------
# 6. Floods: telemetry, rejected bodies and expensive snapshots against `plugboard serve` while kill switches run


FLOOD_LINE = None
HEALTH_PROBE = """
import http.client, json, sys, threading, time
port, stop, latencies, failures = int(sys.argv[1]), threading.Event(), [], []
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
while not stop.is_set():
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/health")
        response = connection.getresponse()
        response.read()
        if response.status == 200:
            latencies.append(time.monotonic() - started)
        else:
            failures.append(str(response.status))
    except Exception as error:
        failures.append(str(error))
    finally:
        connection.close()
    time.sleep(0.05)
print(json.dumps({"latencies": latencies, "failures": failures[:5] + ([f"and {len(failures) - 5} more"] if len(failures) > 5 else [])}))
"""


def board_bytes(path):
    return sum(os.path.getsize(path + suffix) for suffix in ("", "-wal") if os.path.exists(path + suffix))


def flood_process(port, tokens, plan, stop, results):
    """Runs the floods of `plan` ({kind: threads}) in threads of this process, at a lower priority, until `stop` is
    set; then puts the counts of answered requests into `results`. `tokens` holds an SDK token (`sdk`) and one for
    hosts (`hosts`), each for its own routes."""
    try:
        os.nice(10)
    except OSError:
        pass
    counts = {"metrics": 0, "reports": 0, "rejected": 0, "snapshots": 0, "errors": 0}
    counts_lock = threading.Lock()

    def count(name):
        with counts_lock:
            counts[name] += 1

    def metrics_flood(index):
        n = 0
        while not stop.is_set():
            n += 1
            name = f"app-{index}-{n}"
            toggles = {f"invented.{index}.{n}.{k}": {"yes": 1, "no": 1} for k in range(100)}
            toggles["flood.known"] = {"yes": 1, "no": 0}
            body = json.dumps({"appName": name, "instanceId": f"{name}-i", "bucket": {"toggles": toggles}})
            status, _ = common.request(port, "POST", "/api/client/metrics", body.encode(),
                                     {"Authorization": tokens["sdk"], "Content-Type": "application/json"})
            common.request(port, "POST", "/api/client/register",
                         json.dumps({"appName": name, "instanceId": f"{name}-r"}).encode(),
                         {"Authorization": tokens["sdk"], "Content-Type": "application/json"})
            count("metrics" if status in (202, 400, 429, 503) else "errors")

    entries = json.dumps([{"pluginID": f"com.invented.p{k}", "version": "1.0.0", "state": "skipped",
                           "reasonCode": "not_registered", "reason": "invented by the stress suite"}
                          for k in range(5000)])

    def report_flood(index):
        n = 0
        while not stop.is_set():
            n += 1
            body = f'{{"hostId":"invented-{index}-{n}","hostVersion":"1.0.0","entries":{entries}}}'
            status, _ = common.request(port, "POST", "/api/host/report", body.encode(),
                                     {"Authorization": tokens["hosts"], "Content-Type": "application/json"})
            count("reports" if status in (202, 400, 429, 503) else "errors")

    def rejected_flood(index):
        while not stop.is_set():
            try:
                if index % 2:
                    common.rejected_body(port, "/api/client/metrics", {}, 1 << 20)
                else:
                    common.rejected_body(port, "/api/host/report", {"Authorization": tokens["hosts"]}, (1 << 20) + 1024)
                count("rejected")
            except OSError:
                count("errors")

    def snapshot_flood(index):
        local = random.Random(index)
        while not stop.is_set():
            ids = "&".join(f"plugin=com.random.p{local.randrange(10 ** 9)}" for _ in range(500))
            status, _ = common.request(port, "GET", f"/api/host/snapshot?{ids}", headers={"Authorization": tokens["hosts"]})
            count("snapshots" if status in (200, 503, 429) else "errors")

    threads = [threading.Thread(target={"metrics": metrics_flood, "reports": report_flood, "rejected": rejected_flood,
                                        "snapshots": snapshot_flood}[kind], args=(index,))
               for kind, number in plan.items() for index in range(number)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put(counts)


LOCKOUT_LINE = None


def stop_serve(server, scenario):
    """Stops a `common.Server`; a hang or a crash is a failure of `scenario`."""
    for field, sentence in server.stop():
        STATS.fail(scenario, sentence, field)


def lockout_client(port, kind, token, stop, counts, lock):
    """One attacker of the lockout scenario, until `stop` is set: unknown access tokens from 127.0.0.1 on reads
    (`guess`) or on the kill switches' own route (`guess-kill`), or registrations of 60 MiB announced with the token of
    a principal who holds no role (`body`). Counts answers by kind (`guess` for both floods of tokens) and status."""
    number = 0
    while not stop.is_set():
        number += 1
        guessed = f"pba_guess{threading.get_ident()}x{number}"
        try:
            if kind == "guess":
                status, _ = common.admin(port, "plugin.list", token=guessed)
            elif kind == "guess-kill":
                status, _ = common.admin(port, "plugin.kill", {"id": "com.stress.lockout", "reason": "guess"},
                                         token=guessed)
            else:
                status, _ = common.admin(port, "plugin.register", token=token, announce=60 << 20)
        except OSError:
            status = None
        status = status or "error"
        with lock:
            key = ("guess" if kind.startswith("guess") else kind, status)
            counts[key] = counts.get(key, 0) + 1


def scenario_lockout(root, short, rng):
    scenario = "lockout"
    seconds = 20 if short else 60
    board = Board(root, "lockout").init()
    plugin = "com.stress.lockout"
    for result in (board.register(plugin, "1.0.0"), board.cli("plugin", "enable", plugin)):
        if result.code != 0:
            STATS.fail(scenario, f"setup: {result.describe()}")
            return
    admin_token = board.json("access-token", "create", "--name", "stress-admin")["token"]
    mallory = board.json("access-token", "create", "--principal", "mallory", "--name", "stress")["token"]
    server = common.Server(board, "--admin").started()
    port = server.port
    stop, lock, counts = threading.Event(), threading.Lock(), {}
    attackers = [threading.Thread(target=lockout_client, args=(port, kind, mallory, stop, counts, lock), daemon=True)
                 for kind in ["guess"] * 2 + ["guess-kill"] * 2 + ["body"] * 6]
    env = dict(board.env, PLUGBOARD_TOKEN=admin_token)
    env.pop("PLUGBOARD_DB", None)
    remote = ["--server", f"http://127.0.0.1:{port}"]
    kills, peak_rss = [], 0.0
    try:
        for thread in attackers:
            thread.start()
        time.sleep(1)  # the floods are under way before the first kill
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            started = time.monotonic()
            killed = run([BIN, *remote, "plugin", "kill", plugin, "--reason", "lockout"], timeout=60, env=env)
            STATS.add("operations")
            if killed.code != 0:
                STATS.fail(scenario, f"a valid admin token's kill was refused under the floods: {killed.describe()}")
                break
            kills.append(time.monotonic() - started)
            revived = run([BIN, *remote, "plugin", "revive", plugin, "--reason", "lockout"], timeout=60, env=env)
            STATS.add("operations")
            if revived.code != 0:
                STATS.fail(scenario, f"a valid admin token's revive was refused under the floods: {revived.describe()}")
                break
            peak_rss = max(peak_rss, process_memory(server.pid)[1])
            time.sleep(0.2)
    finally:
        stop.set()
        for thread in attackers:
            thread.join(60)
        peak_rss = max(peak_rss, process_memory(server.pid)[1])
        stop_serve(server, scenario)
    guesses = {status: count for (kind, status), count in counts.items() if kind == "guess"}
    bodies = {status: count for (kind, status), count in counts.items() if kind == "body"}
    STATS.add("operations", sum(counts.values()))
    if set(guesses) - {401, 429} or not guesses.get(429):
        STATS.fail(scenario, f"unknown tokens were not answered 401, then 429: {guesses}")
    if set(bodies) - {403} or not bodies:
        STATS.fail(scenario, f"no-rights bodies were not all refused with 403 before they were read: {bodies}")
    kill_p99 = percentile(kills, 0.99) * 1000
    if not kills:
        STATS.fail(scenario, "no kill completed")
    elif kill_p99 > 3000:
        STATS.fail(scenario, f"plugin kill through the operations API took {kill_p99:.0f} ms (p99) under the lockout floods")
    global LOCKOUT_LINE
    LOCKOUT_LINE = (f"lockout: plugin kill p99 {kill_p99:.0f} ms through the operations API (p50 {percentile(kills, 0.5) * 1000:.0f} ms, "
                    f"{len(kills)} kills) under {sum(guesses.values())} unknown tokens from 127.0.0.1 ({guesses.get(429, 0)} "
                    f"answered 429) and {sum(bodies.values())} no-rights 60 MiB bodies ({bodies.get(403, 0)} refused unread with "
                    f"403); server peak RSS {peak_rss:.0f} MiB; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    check_board(board, scenario)


def scenario_floods(root, short, rng):
    scenario = "floods"
    seconds = 30 if short else 90
    board = Board(root, "floods").init()
    plugin = "com.stress.flood"
    for result in (board.register(plugin, "1.0.0"), board.cli("plugin", "enable", plugin),
                   board.cli("flag", "create", "flood.known")):
        if result.code != 0:
            STATS.fail(scenario, f"setup: {result.describe()}")
            return
    tokens = {kind: board.host_token(f"flood-{kind}", kind) for kind in ("sdk", "hosts")}
    server = common.Server(board).started()
    port = server.port
    STATS.add("operations")
    host = common.Host(TEST_HOST, common.served_host(server.url, tokens["hosts"], board.board_key(),
                                                     os.path.join(board.folder, "host-cache"), "flood-host", [plugin]))

    def wait_event(name, after, timeout=30):
        seen = host.first(event_is(name, plugin), after, timeout)
        return seen[0] if seen else None

    kills, reach = {"before": [], "flood": [], "all": []}, {"before": [], "flood": [], "all": []}

    def kill_round(phase):
        mark = started = time.time()
        result = board.cli("plugin", "kill", plugin, "--reason", "flood")
        if result.code != 0:
            STATS.fail(scenario, f"kill under {phase}: {result.describe()}")
            return False
        kills[phase].append(time.time() - started)
        seen = wait_event("deactivated", mark)
        if seen is None:
            STATS.fail(scenario, f"the remote host did not deactivate {plugin} within 30 s of a kill ({phase})")
            return False
        reach[phase].append(seen - started)
        mark = time.time()
        if board.cli("plugin", "revive", plugin, "--reason", "flood").code != 0:
            STATS.fail(scenario, f"revive under {phase} failed")
            return False
        if wait_event("loaded", mark) is None:
            STATS.fail(scenario, f"the remote host did not load {plugin} again within 30 s ({phase})")
            return False
        return True

    floods, probe = [], []
    try:
        if wait_event("loaded", 0, 60) is None:
            STATS.fail(scenario, f"the remote host did not load {plugin} within 60 s: {one_line(host.stderr)}")
            return
        # /health with no flood, for comparison (this machine may be busy with other work).
        idle_probe = subprocess.Popen([sys.executable, "-c", HEALTH_PROBE, str(port)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        probe.append(idle_probe)
        time.sleep(4)
        try:
            idle_health = json.loads(idle_probe.communicate(b"", timeout=30)[0] or b"{}").get("latencies", [])
        except (subprocess.TimeoutExpired, ValueError):
            idle_health = []
        for _ in range(5):
            if not kill_round("before"):
                return
        start_bytes = board_bytes(board.path)
        stop = threading.Event()
        peak = [0.0]

        def memory_probe():
            while not stop.is_set():
                peak[0] = max(peak[0], process_memory(server.pid)[0])
                time.sleep(0.2)

        # The floods run in processes of their own at a lower priority (nice 10): a real flood comes from other machines,
        # and here the generators share the cores with the server and the CLI being measured (and, in this process, the
        # interpreter lock with the threads that time the kills). First the telemetry floods alone (what kill
        # switches must never wait for), then every flood at once.
        # /health is probed from a process of its own, at the normal priority.
        probe.insert(0, subprocess.Popen([sys.executable, "-c", HEALTH_PROBE, str(port)], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        context = multiprocessing.get_context("fork")
        results = context.Queue()
        floods.extend([context.Event(), context.Event()])
        telemetry = context.Process(target=flood_process, args=(port, tokens, {"metrics": 4, "reports": 3}, floods[0], results),
                                    daemon=True)
        others = context.Process(target=flood_process, args=(port, tokens, {"rejected": 8, "snapshots": 16}, floods[1], results),
                                 daemon=True)
        memory = threading.Thread(target=memory_probe)
        memory.start()
        telemetry.start()
        time.sleep(3)  # let the floods build up
        deadline = time.monotonic() + seconds / 2
        while time.monotonic() < deadline:
            if not kill_round("flood"):
                break
        others.start()
        time.sleep(2)
        deadline = time.monotonic() + seconds / 2
        while time.monotonic() < deadline:
            if not kill_round("all"):
                break
        for event in floods:
            event.set()
        counts = {"metrics": 0, "reports": 0, "rejected": 0, "snapshots": 0, "errors": 0}
        for _ in range(2):
            try:
                for name, value in results.get(timeout=90).items():
                    counts[name] += value
            except queue.Empty:
                STATS.fail(scenario, "a flood process did not report within 90 s", "hangs")
        for process in (telemetry, others):
            process.join(30)
            if process.is_alive():
                process.kill()
        stop.set()
        memory.join(10)
        try:
            out, _ = probe[0].communicate(b"", timeout=30)
            probed = json.loads(out or b"{}")
        except (subprocess.TimeoutExpired, ValueError) as error:
            probe[0].kill()
            probed = {"failures": [f"the probe did not report: {error}"]}
        health = probed.get("latencies", [])
        health_failures = probed.get("failures", [])
        STATS.add("operations", sum(counts.values()))
        if server.process.poll() is not None:
            STATS.fail(scenario, f"plugboard serve exited during the floods: {server.process.returncode}", "crashes")
            return
        rss, hwm = process_memory(server.pid)
        peak_rss = max(peak[0], hwm)
        after = common.request(port, "GET", "/health", timeout=10)
        if after[0] != 200:
            STATS.fail(scenario, f"/health does not answer after the floods: {after}")
        time.sleep(6)  # one usage flush
        telemetry = board.path + ".telemetry"
        telemetry_bytes = os.path.getsize(telemetry) if os.path.exists(telemetry) else 0
        grown = board_bytes(board.path) - start_bytes
        status = board.cli("plugin", "status")
        clients = board.cli("clients", "--json")
        for result in (status, clients):
            if result.crashed():
                STATS.fail(scenario, f"crash: {result.describe()}", "crashes")
            elif result.code != 0:
                STATS.fail(scenario, result.describe())
        if "dropped" not in (status.error + clients.error):
            STATS.fail(scenario, "neither plugin status nor clients says that telemetry was dropped")
        kill_p99 = percentile(kills["flood"], 0.99) * 1000
        health_p99 = percentile(health, 0.99) * 1000
        if peak_rss > 200:
            STATS.fail(scenario, f"the server's peak RSS was {peak_rss:.0f} MiB (more than 200 MiB)")
        if health_failures:
            STATS.fail(scenario, f"/health failed {len(health_failures)} times under the floods: {health_failures[0]}")
        if kill_p99 > 1000:
            STATS.fail(scenario, f"plugin kill took {kill_p99:.0f} ms (p99) under the telemetry floods")
        if percentile(kills["all"], 0.99) > 3:
            STATS.fail(scenario, f"plugin kill took {percentile(kills['all'], 0.99) * 1000:.0f} ms (p99) under every flood")
        if telemetry_bytes > 64 << 20:
            STATS.fail(scenario, f"the telemetry file grew to {telemetry_bytes >> 20} MiB, past its 64 MiB bound")
        try:
            connection = sqlite3.connect(f"file:{board.path}?mode=ro", uri=True, timeout=30)
            try:
                in_board = {table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                            for table in ("hosts", "load_reports", "client_instances", "flag_usage")}
            finally:
                connection.close()
            if any(in_board.values()):
                STATS.fail(scenario, f"telemetry reached the board itself: {in_board}")
        except sqlite3.Error as error:
            STATS.fail(scenario, f"cannot read the board after the floods: {error}")
        global FLOOD_LINE
        FLOOD_LINE = (f"floods: plugin kill p99 {kill_p99:.0f} ms under telemetry flood "
                      f"(p50 {percentile(kills['flood'], 0.5) * 1000:.0f} ms, {len(kills['flood'])} kills; idle p50 "
                      f"{percentile(kills['before'], 0.5) * 1000:.0f} ms; under every flood p99 "
                      f"{percentile(kills['all'], 0.99) * 1000:.0f} ms), kill to remote host p50 "
                      f"{percentile(reach['flood'], 0.5) * 1000:.0f} ms / {percentile(reach['all'], 0.5) * 1000:.0f} ms "
                      f"(idle {percentile(reach['before'], 0.5) * 1000:.0f} ms), server peak RSS {peak_rss:.0f} MiB, "
                      f"/health p99 {health_p99:.0f} ms (p50 {percentile(health, 0.5) * 1000:.0f} ms; idle p99 "
                      f"{percentile(idle_health, 0.99) * 1000:.0f} ms), board and WAL grew "
                      f"{max(0, grown) >> 10} KiB (the kills' audit rows), telemetry file {telemetry_bytes / (1 << 20):.1f} MiB; "
                      f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        log(f"floods: {counts['metrics']} metrics, {counts['reports']} reports, {counts['rejected']} rejected bodies, "
            f"{counts['snapshots']} snapshots, {counts['errors']} transport errors in {seconds} s")
        check_board(board, scenario)
    finally:
        for event in floods:
            event.set()
        for process in probe:
            if process.poll() is None:
                process.kill()
        host.stop()
        stop_serve(server, scenario)


# ---------------------------------------------------------------------------------------------------------------
# replay: a proxy replays a snapshot from before a kill switch to new hosts


def scenario_replay(root, short, rng):
    """A proxy between `plugboard serve` and the hosts keeps the snapshot a first host read while a plug-in ran; the
    plug-in is killed; new hosts with empty caches then get that snapshot replayed (past its 2 s lifetime, with the
    freshness proof that came with it, with the proof the server gives now, or without one). None may load the killed
    plug-in, and each takes the board's real state once the proxy lets it through."""
    scenario = "replay"
    rounds = 3 if short else 8
    board = Board(root, "replay").init()
    killed, other = "com.stress.replayed", "com.stress.other"
    for result in (board.register(killed, "1.0.0"), board.register(other, "1.0.0"), board.cli("plugin", "enable", killed),
                   board.cli("plugin", "enable", other)):
        if result.code != 0:
            STATS.fail(scenario, f"setup: {result.describe()}")
            return
    token = board.host_token("replay-hosts")
    board_key = board.board_key()
    server = common.Server(board, "--snapshot-lifetime", "2")
    mode_file = os.path.join(board.folder, "proxy-mode")

    def mode(word):
        with open(mode_file, "w") as handle:
            handle.write(word)

    mode("pass")
    proxy = subprocess.Popen([sys.executable, os.path.join(DRILLS, "drill"), "snapshot-proxy", "--upstream", str(server.url),
                              "--mode-file", mode_file],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    hosts = []

    def host(name):
        started = common.Host(TEST_HOST, common.served_host(url, token, board_key, os.path.join(board.folder, "cache-" + name),
                                                            name, [killed, other]))
        hosts.append(started)
        STATS.add("operations")
        return started

    recoveries = []
    try:
        server.started()
        url = "http://127.0.0.1:" + proxy.stdout.readline().decode().split()[-1]
        for number in range(rounds):
            attack = ("replay", "replay-proof", "strip-proof")[number % 3]
            mode("pass")
            if number and board.cli("plugin", "revive", killed, "--reason", "replay").code != 0:
                STATS.fail(scenario, "revive failed")
                return
            first = host(f"first-{number}")
            if first.first(event_is("loaded", killed)) is None:
                STATS.fail(scenario, f"round {number}: a host through the proxy did not load {killed} within 30 s")
                return
            first.stop()
            if board.cli("plugin", "kill", killed, "--reason", "replay").code != 0:
                STATS.fail(scenario, "kill failed")
                return
            time.sleep(3)  # past the 2 s lifetime of every snapshot signed before the kill
            mode(attack)
            fresh = host(f"fresh-{number}")
            refused = fresh.first(lambda e: e.get("event") == "warning" and "proven fresh" in e.get("message", ""))
            if refused is None:
                STATS.fail(scenario, f"round {number} ({attack}): a new host did not refuse the replayed snapshot")
            mode("pass")
            started = time.monotonic()
            if fresh.first(event_is("loaded", other), timeout=60) is None:
                STATS.fail(scenario, f"round {number} ({attack}): the new host did not load {other} within 60 s of the proxy passing")
            else:
                recoveries.append(time.monotonic() - started)
            fresh.stop()
            if fresh.any_event(event_is("loaded", killed)):
                STATS.fail(scenario, f"round {number} ({attack}): a new host loaded the killed {killed} from a replayed snapshot")
        log(f"replay: {rounds} new hosts refused a replayed snapshot and loaded nothing from it; the board's state "
            f"reached them {percentile(recoveries, 0.5) * 1000:.0f} ms (p50) after the proxy let it through")
        check_board(board, scenario)
    finally:
        for started in hosts:
            if started.process.poll() is None:
                started.stop()
        common.stop(proxy, 10)
        stop_serve(server, scenario)


# ---------------------------------------------------------------------------------------------------------------
# 10. Change requests: approvals, revocations, role removals and applies racing on a protected production


CHANGE_LINE = None
CR_PEOPLE = {"alice": 61001, "bob": 61002, "carol": 61003, "dave": 61004}
CR_PLUGINS = ("com.stress.cr-alpha", "com.stress.cr-beta", "com.stress.cr-gamma")
CR_VERSIONS = ("1.0.0", "1.1.0")
CR_REQUIRED = 2
# Principals whose roles the race removes and grants again; root stays an admin (the board's maker, the last admin).
CR_ROLE_PRINCIPALS = ("alice", "bob", "carol", "dave", "puppet", "sock")


class ChangeRace:
    """A served board whose production needs CR_REQUIRED approvals, and the people acting on it: root on the board's
    machine (no token), alice, bob, carol and dave each through tokens whose chain starts with a token their own OS user
    (`uid:N`, no passwd entry) made as themselves with `setpriv`, `puppet` through tokens root made for it (root's), and
    `sock` through tokens alice's tokens made for it (alice's person). Remembers the secrets of the tokens it believes
    active, and counts what it did."""

    def __init__(self, board, people_home, scenario):
        self.board = board
        self.home = people_home
        self.scenario = scenario
        self.url = None
        self.lock = threading.Lock()
        self.person_lock = threading.Lock()  # one OS user at a time is a board admin while it makes its first token
        self.tokens = {}  # principal -> {name: secret}, the tokens the drill believes active
        self.pending = set()  # request numbers the drill believes open
        self.approved = []  # (request, principal, token name) of the latest approvals: what the revoker and roles aim at
        self.serial = 0
        self.counts = {"opened": 0, "open refused": 0, "approved": 0, "approve refused": 0, "applied": 0,
                       "apply refused": 0, "apply refused for void approvals": 0, "revoked": 0, "minted": 0, "roles": 0,
                       "roles refused": 0}

    def count(self, key):
        with self.lock:
            self.counts[key] += 1

    def next_name(self, prefix):
        with self.lock:
            self.serial += 1
            return f"{prefix}-{self.serial}"

    def remember(self, principal, name, secret):
        with self.lock:
            self.tokens.setdefault(principal, {})[name] = secret

    def checked(self, label, result):
        """A crash, a hang or "database is locked" reaching a user is a failure; returns the result."""
        if result.crashed():
            STATS.fail(self.scenario, f"crash: {label}: {result.describe()}", "crashes")
        elif result.timed_out:
            STATS.fail(self.scenario, f"hang: {label}: {result.describe()}", "hangs")
        elif result.code != 0 and result.busy():
            STATS.fail(self.scenario, f"busy reached the user: {label}: {result.describe()}")
        return result

    # Acting

    def local(self, *args):
        """root on the board's machine, without a token."""
        return self.checked("root " + " ".join(args[:3]), self.board.cli(*args))

    def remote(self, principal, name, secret, *args):
        env = dict(self.board.env, PLUGBOARD_TOKEN=secret, HOME=self.home)
        env.pop("PLUGBOARD_DB", None)
        return self.checked(f"{principal}/{name} " + " ".join(args[:3]),
                            run([BIN, "--server", self.url, *args], env=env, timeout=120))

    def as_identity(self, identity, *args):
        principal, name, secret = identity
        return self.local(*args) if secret is None else self.remote(principal, name, secret, *args)

    def identity(self, rng, principal=None):
        """(principal, token name, secret) of someone who acts, at random; root acts on the board's machine."""
        with self.lock:
            choices = [("root", None, None)] + [(p, n, s) for p, tokens in self.tokens.items() for n, s in tokens.items()
                                                if principal in (None, p)]
        return rng.choice(choices)

    def forget_revoked(self):
        """Drops from the drill's tokens those the board says are revoked (a revocation takes what a token made)."""
        connection = sqlite3.connect(f"file:{self.board.path}?mode=ro", uri=True, timeout=30)
        try:
            revoked = set(connection.execute("SELECT principal, name FROM access_tokens WHERE revoked_at IS NOT NULL"))
        finally:
            connection.close()
        with self.lock:
            for principal, tokens in self.tokens.items():
                for name in [n for n in tokens if (principal, n) in revoked]:
                    del tokens[name]

    # Tokens

    def personal_token(self, principal):
        """A first token of `principal` made by its person's OS user as themselves (as the tests'
        `Sandbox.personalToken` does): root makes `uid:N` an admin for the time it takes, then removes it."""
        uid = CR_PEOPLE[principal]
        name = self.next_name("first")
        with self.person_lock:
            self.local("admin", "add", f"uid:{uid}")
            env = dict(self.board.env, HOME=self.home)
            created = self.checked(f"uid:{uid} access-token create", run(
                ["/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", BIN, "access-token", "create",
                 "--principal", principal, "--name", name, "--json", "--db", self.board.path],
                env=env, cwd=self.board.folder, timeout=120))
            STATS.add("operations")
            removed = self.local("admin", "remove", f"uid:{uid}")
        if removed.code != 0:
            STATS.fail(self.scenario, f"uid:{uid} stayed a board admin: {removed.describe()}")
        if created.code != 0:
            return None
        self.remember(principal, name, json.loads(created.out)["token"])
        self.count("minted")
        return name

    def child_token(self, maker, principal, rng):
        """A token of `principal` made through the server with one of `maker`'s tokens (its parent)."""
        with self.lock:
            made_with = list(self.tokens.get(maker, {}).items())
        if not made_with:
            return None
        parent, secret = rng.choice(made_with)
        name = self.next_name("laptop" if principal == maker else "sock")
        args = ["access-token", "create", "--name", name, "--json"] + (["--principal", principal] if principal != maker else [])
        created = self.remote(maker, parent, secret, *args)
        if created.code != 0:
            detail(f"change-requests: {maker}/{parent} made no token for {principal}: {refusal(created.error, 200)}")
            return None
        self.remember(principal, name, json.loads(created.out)["token"])
        self.count("minted")
        return name

    def puppet_token(self):
        """A token of `puppet` that root makes for it: root is the person behind it."""
        name = self.next_name("puppet")
        created = self.local("access-token", "create", "--principal", "puppet", "--name", name, "--json")
        if created.code != 0:
            return None
        self.remember("puppet", name, json.loads(created.out)["token"])
        self.count("minted")
        return name

    def regrant(self, principal, rng):
        """A new token for `principal`, made the way its first one was."""
        if principal == "puppet":
            return self.puppet_token()
        if principal == "sock":
            return self.child_token("alice", "sock", rng)
        with self.lock:
            has_tokens = bool(self.tokens.get(principal))
        if has_tokens and rng.random() < 0.5:
            return self.child_token(principal, principal, rng)
        return self.personal_token(principal)

    # The racing threads

    def guarded(self, name, function, rng, deadline):
        """Runs one racing thread; a broken thread is a failure of the drill, not of Plugboard."""
        try:
            function(rng, deadline)
        except Exception as error:
            STATS.fail(self.scenario, f"the {name} thread stopped: {type(error).__name__}: {error}")

    def opener(self, rng, deadline):
        while time.monotonic() < deadline:
            plugin = rng.choice(CR_PLUGINS)
            kind = rng.choices(("enable", "pin", "unpin", "disable"), weights=(4, 3, 1, 2))[0]
            args = ["plugin", kind, plugin] + ([rng.choice(CR_VERSIONS)] if kind == "pin" else [])
            result = self.as_identity(self.identity(rng), *args, "--env", "production", "--json")
            if result.code == 0:
                try:
                    answer = json.loads(result.out)
                except ValueError:
                    answer = {}
                if isinstance(answer, dict) and isinstance(answer.get("id"), int) and answer.get("state") in ("open", "scheduled"):
                    with self.lock:
                        self.pending.add(answer["id"])
                    self.count("opened")
            else:
                self.count("open refused")
                self.note_pending(result.error)
            time.sleep(rng.uniform(0.1, 0.5))

    def note_pending(self, error):
        """`change request N already asks for this`: N is open."""
        words = error.split()
        for index, word in enumerate(words[:-1]):
            if word == "request" and words[index + 1].isdigit() and "already asks" in error:
                with self.lock:
                    self.pending.add(int(words[index + 1]))
                return

    def pick_pending(self, rng, approved=False):
        """A request believed open; with `approved`, most often one approved lately."""
        with self.lock:
            lately = [request for request, _, _ in self.approved if request in self.pending]
            if approved and lately and rng.random() < 0.7:
                return rng.choice(lately)
            return rng.choice(sorted(self.pending)) if self.pending else None

    def approver_lately(self, rng):
        """(principal, token name) of an approval of a request still believed open, if any."""
        with self.lock:
            lately = [(principal, name) for request, principal, name in self.approved if request in self.pending]
        return rng.choice(lately) if lately else None

    def approver(self, rng, deadline):
        while time.monotonic() < deadline:
            request = self.pick_pending(rng)
            if request is None:
                time.sleep(0.2)
                continue
            identity = self.identity(rng)
            result = self.as_identity(identity, "change", "approve", str(request))
            self.count("approved" if result.code == 0 else "approve refused")
            if result.code == 0:
                with self.lock:
                    self.approved = (self.approved + [(request, identity[0], identity[1])])[-8:]
            if result.code != 0:
                detail(f"change-requests: approve {request}: {refusal(result.error, 250)}")
                self.drop_closed(request, result.error)
            time.sleep(rng.uniform(0.0, 0.3))

    def drop_closed(self, request, error):
        if any(f"change request {request} is {state}" in error for state in ("applied", "rejected", "cancelled")):
            with self.lock:
                self.pending.discard(request)

    def applier(self, rng, deadline):
        while time.monotonic() < deadline:
            request = self.pick_pending(rng, approved=True)
            if request is None:
                time.sleep(0.2)
                continue
            result = self.as_identity(self.identity(rng), "change", "apply", str(request))
            if result.code == 0:
                self.count("applied")
                with self.lock:
                    self.pending.discard(request)
            else:
                self.count("apply refused")
                if "waits for approvals that count" in result.error:
                    self.count("apply refused for void approvals")
                detail(f"change-requests: apply {request}: {refusal(result.error, 250)}")
                self.drop_closed(request, result.error)
            time.sleep(rng.uniform(0.2, 0.8))

    def revoker(self, rng, deadline):
        """Revokes tokens (root, on the board's machine), most often one that approved a request still open, and
        makes new ones, most often for a principal left without."""
        while time.monotonic() < deadline:
            with self.lock:
                held = [(p, n) for p, tokens in self.tokens.items() for n in tokens]
                without = [p for p in CR_ROLE_PRINCIPALS if not self.tokens.get(p)]
            lately = self.approver_lately(rng)
            choice = rng.random()
            if lately in held and choice < 0.5:
                target = lately
            elif held and choice < 0.7:
                target = rng.choice(held)
            else:
                target = None
                self.regrant(rng.choice(without) if without and rng.random() < 0.8 else rng.choice(CR_ROLE_PRINCIPALS), rng)
            if target:
                result = self.local("access-token", "revoke", target[1], "--principal", target[0], "--reason", "stress")
                if result.code == 0:
                    self.count("revoked")
                    self.forget_revoked()
            time.sleep(rng.uniform(0.8, 2.0))

    def roles(self, rng, deadline):
        """Removes and grants again board admin and owner or maintainer roles (root, on the board's machine)."""
        while time.monotonic() < deadline:
            lately = self.approver_lately(rng)
            principal = lately[0] if lately and lately[0] != "root" and rng.random() < 0.5 else rng.choice(CR_ROLE_PRINCIPALS)
            if rng.random() < 0.5:
                admins = {row[0] for row in self.read("SELECT principal FROM admins")}
                if principal in admins and rng.random() < 0.4:
                    time.sleep(0.2)
                    continue  # most principals hold a right most of the time, so that requests get applied
                args = ("admin", "remove" if principal in admins else "add", principal)
            else:
                plugin = rng.choice(CR_PLUGINS)
                role = self.read("SELECT role FROM plugin_owners WHERE plugin_id = ? AND principal = ?", plugin, principal)
                if role and rng.random() < 0.7:
                    args = ("owner", "remove", plugin, principal)
                else:
                    args = ("owner", "add", plugin, principal, "--role", rng.choice(("owner", "maintainer")))
            result = self.local(*args)
            self.count("roles" if result.code == 0 else "roles refused")
            time.sleep(rng.uniform(0.8, 2.0))

    def read(self, sql, *arguments):
        connection = sqlite3.connect(f"file:{self.board.path}?mode=ro", uri=True, timeout=30)
        try:
            return connection.execute(sql, arguments).fetchall()
        finally:
            connection.close()


def open_to_other_users(board, root):
    """As the tests' `Sandbox.openToOtherUsers`: the board's folder and files writable by every user."""
    os.chmod(root, 0o755)
    os.chmod(os.path.dirname(board.folder), 0o755)
    os.chmod(board.folder, 0o777)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(board.path + suffix):
            os.chmod(board.path + suffix, 0o666)


def close_to_other_users(board):
    """As the tests' `Sandbox.closeToOtherUsers`: root's again, whoever made the sidecars meanwhile."""
    os.chmod(board.folder, 0o755)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(board.path + suffix):
            os.chown(board.path + suffix, 0, 0)
            os.chmod(board.path + suffix, 0o600)


def scenario_change_requests(root, short, rng):
    scenario = "change-requests"
    global CHANGE_LINE
    if os.geteuid() != 0 or not os.access("/usr/bin/setpriv", os.X_OK):
        # As the tests that need people (canSwitchUser): skipped, not failed.
        log("change-requests: skipped: needs root and /usr/bin/setpriv (people are OS users of their own)")
        return
    board = Board(root, scenario).init()
    board.timeout = 120  # a loaded machine is slow, and only a command that takes longer is a hang
    home = os.path.join(root, "people-home")
    os.makedirs(home)
    os.chmod(home, 0o1777)
    race = ChangeRace(board, home, scenario)
    for plugin in CR_PLUGINS:
        for version in CR_VERSIONS:
            if board.register(plugin, version).code != 0:
                raise DrillError(f"cannot register {plugin}@{version}")
    for principal in ("alice", "bob", "puppet", "sock"):
        board.ok("admin", "add", principal)
    board.ok("owner", "add", CR_PLUGINS[0], "carol", "--role", "owner")
    board.ok("owner", "add", CR_PLUGINS[1], "carol", "--role", "maintainer")
    board.ok("owner", "add", CR_PLUGINS[1], "dave", "--role", "owner")
    board.ok("owner", "add", CR_PLUGINS[2], "dave", "--role", "maintainer")
    board.ok("plugin", "enable", CR_PLUGINS[2], "--env", "production")
    open_to_other_users(board, root)
    for principal in CR_PEOPLE:
        if race.personal_token(principal) is None:
            raise DrillError(f"the OS user uid:{CR_PEOPLE[principal]} could not make a first token for {principal}")
    race.puppet_token()
    board.ok("policy", "set", "--env", "production", "--approvals", str(CR_REQUIRED))
    server = common.Server(board, "--admin").started()
    race.url = server.url
    threads = []
    try:
        for principal in CR_PEOPLE:
            if race.child_token(principal, principal, rng) is None:
                raise DrillError(f"{principal} could not make a token with their first one through the server")
        if race.child_token("alice", "sock", rng) is None:
            raise DrillError("alice could not make a token for sock through the server")
        setup_seq = race.read("SELECT max(seq) FROM audit_log")[0][0]
        admins = {row[0] for row in race.read("SELECT principal FROM admins")}
        owners = {(p, q): r for p, q, r in race.read("SELECT plugin_id, principal, role FROM plugin_owners")}
        seconds = 30 if short else 120
        deadline = time.monotonic() + seconds
        workers = [("opener", race.opener, 2), ("approver", race.approver, 3), ("applier", race.applier, 1),
                   ("revoker", race.revoker, 1), ("roles", race.roles, 1)]
        for name, function, count in workers:
            for index in range(count):
                thread_rng = random.Random(f"{rng.random()}-{name}-{index}")
                threads.append(threading.Thread(target=race.guarded, args=(name, function, thread_rng, deadline),
                                                name=f"cr-{name}-{index}"))
        for thread in threads:
            thread.start()
    finally:
        for thread in threads:
            thread.join()
        stop_serve(server, scenario)
        close_to_other_users(board)
    log("change-requests: " + ", ".join(f"{value} {key}" for key, value in race.counts.items()) + f" in {seconds} s")
    requests, applied, violations = check_change_requests(board, scenario, setup_seq, admins, owners)
    CHANGE_LINE = (f"change-requests: {requests} requests, {applied} applied, {race.counts['apply refused']} refused "
                   f"applies, {violations} violations")
    if applied == 0:
        STATS.fail(scenario, f"no request was applied in {seconds} s: the race proved nothing")
    check_board(board, scenario)


def check_change_requests(board, scenario, setup_seq, admins, owners):
    """Replays the audit log from `setup_seq` (admins and owners as they were then): for every applied request, the
    approvals standing at its `change.apply` row (each principal's last `change.approve` before it) that count, each by
    a person (the `created_by` of the first token of its chain, from access_tokens) other than the author's person, with
    a token none of whose chain was revoked before that row, by a principal who held the right then (a board admin, or
    an owner or maintainer of the request's plug-in), counted once per person. Fewer than the request's `required` is a
    violation. Returns (requests, applied, violations)."""
    connection = sqlite3.connect(f"file:{board.path}?mode=ro", uri=True, timeout=30)
    connection.row_factory = sqlite3.Row
    try:
        tokens = {(row["principal"], row["name"]): row for row in connection.execute("SELECT * FROM access_tokens")}
        requests = {row["id"]: row for row in connection.execute("SELECT * FROM change_requests")}
        events = connection.execute(
            "SELECT seq, actor, action, target_id, after_json FROM audit_log WHERE outcome = 'ok' AND seq > ? AND action IN "
            "('admin.add', 'admin.remove', 'owner.add', 'owner.remove', 'access-token.revoke', 'change.approve', "
            "'change.apply', 'change.emergency') ORDER BY seq", (setup_seq,)).fetchall()
    finally:
        connection.close()

    def chain(principal, token):
        """The tokens from (principal, token) up to the first of its chain; None when a link is missing."""
        links, key = [], (principal, token)
        while key is not None:
            row = tokens.get(key)
            if row is None or key in links:
                return None
            links.append(key)
            key = (row["parent_principal"], row["parent_name"]) if row["parent_principal"] is not None else None
        return links

    def person(principal, token):
        if token is None:
            return principal
        links = chain(principal, token)
        return tokens[links[-1]]["created_by"] if links else None

    def plugin_of(request):
        ids = set()
        for row in json.loads(request["diff"] or "[]"):  # stored as ChangeRow encodes it: targetType, targetID
            kind, target = row.get("targetType", row.get("target_type")), row.get("targetID", row.get("target_id"))
            if kind in ("plugin", "plugin_version", "rollout", "quarantine_release", "kill_switch") and target:
                ids.add(target.split("@")[0].split(" ")[0])
        return ids.pop() if len(ids) == 1 else None

    admins, owners = set(admins), dict(owners)
    revoked_at = {}  # (principal, name) -> seq of its revocation
    approvals = {}  # request -> principal -> (seq, digest, token)
    applied_seen = set()
    violations = 0
    voided = 0  # applied requests some of whose approvals no longer counted at the apply (revoked, right lost)
    for seq, actor, action, target, after_text in events:
        after = json.loads(after_text) if after_text else {}
        if action == "admin.add":
            admins.add(target)
        elif action == "admin.remove":
            admins.discard(target)
        elif action == "owner.add":
            owners[(target, after.get("principal"))] = after.get("role")
        elif action == "owner.remove":
            owners.pop((target, after.get("principal")), None)
        elif action == "access-token.revoke":
            principal, _, name = target.rpartition("/")
            revoked_at.setdefault((principal, name), seq)
        elif action == "change.approve":
            approvals.setdefault(int(target), {})[actor] = (seq, after.get("digest"), after.get("token"))
        elif action == "change.emergency":
            violations += 1
            STATS.fail(scenario, f"violation: change request {target} was applied as an emergency (audit row {seq}), "
                                 "which nobody in the drill asked for")
        elif action == "change.apply":
            number = int(target)
            applied_seen.add(number)
            request = requests.get(number)
            if request is None:
                violations += 1
                STATS.fail(scenario, f"violation: audit row {seq} applied change request {number}, which the board has not")
                continue
            plugin = plugin_of(request)
            author_person = person(request["author"], request["author_token"])
            counted, void = {}, []
            for principal, (approved_seq, digest, token) in sorted(approvals.get(number, {}).items()):
                links = chain(principal, token) if token is not None else []
                behind = person(principal, token)
                revoked = [f"{p}/{n}" for p, n in (links or []) if revoked_at.get((p, n), seq + 1) < seq]
                right = principal in admins or (plugin is not None and (plugin, principal) in owners)
                if principal == request["author"]:
                    void.append(f"{principal} is the author")
                elif digest != request["digest"]:
                    void.append(f"{principal} approved another digest")
                elif links is None or behind is None or author_person is None:
                    void.append(f"{principal}'s token chain does not reach a person")
                elif revoked:
                    void.append(f"{principal} approved with {token}, and {revoked[0]} was revoked before row {seq}")
                elif not right:
                    void.append(f"{principal} held no right on {plugin or 'the board'} at row {seq}")
                elif behind == author_person:
                    void.append(f"{principal} is {behind}, the author's person")
                elif behind in counted:
                    void.append(f"{principal} is {behind}, as {counted[behind]} is")
                else:
                    counted[behind] = principal
            listed = set(json.loads(after_text or "{}").get("approvals", []))
            voided += any(" was revoked before " in reason or " held no right " in reason for reason in void)
            if len(counted) < request["required"]:
                violations += 1
                STATS.fail(scenario, f"violation: change request {number} ({request['summary']}, by {request['author']} = "
                                     f"{author_person}) was applied at audit row {seq} with {len(counted)} eligible approvals "
                                     f"by distinct other people ({', '.join(f'{p} = {q}' for q, p in counted.items()) or 'none'}) "
                                     f"of the {request['required']} required; the board counted {sorted(listed)}; "
                                     f"void: {'; '.join(void) or 'none'}")
            elif not listed <= set(counted.values()):
                STATS.fail(scenario, f"change request {number} applied at audit row {seq} counted "
                                     f"{sorted(listed - set(counted.values()))}, whose approvals were void: {'; '.join(void)}")
    applied = [number for number, request in requests.items() if request["state"] == "applied"]
    for number in applied:
        if number not in applied_seen:
            violations += 1
            STATS.fail(scenario, f"violation: change request {number} is applied, but no change.apply row applied it")
        shown = board.cli("change", "show", str(number), "--json")
        if shown.code != 0 or json.loads(shown.out).get("state") != "applied":
            STATS.fail(scenario, f"change show {number} does not show it applied: {shown.describe()}")
    log(f"change-requests: {voided} of {len(applied)} applied requests had approvals that no longer counted at the "
        "apply (a token revoked, a right lost)")
    return len(requests), len(applied), violations


# ---------------------------------------------------------------------------------------------------------------


SCENARIOS = [("concurrency", scenario_concurrency), ("crashes", scenario_crashes), ("hostile", scenario_hostile),
             ("tampering", scenario_tampering), ("hard", scenario_hard), ("floods", scenario_floods),
             ("replay", scenario_replay), ("lockout", scenario_lockout), ("restore-crash", scenario_restore_crash),
             ("change-requests", scenario_change_requests)]


def snapshot_binaries(root):
    """Run copies, so that a rebuild of the repository during the run neither fails an exec (ETXTBSY) nor mixes
    two builds in one run."""
    global BIN, TEST_HOST
    BIN, TEST_HOST = common.binaries(STATS)
    folder = os.path.join(root, "bin")
    os.makedirs(folder)
    copies = []
    for path in (BIN, TEST_HOST):
        copy = os.path.join(folder, os.path.basename(path))
        for attempt in range(30):
            try:
                before = os.stat(path).st_mtime_ns
                shutil.copy2(path, copy)
                if os.stat(path).st_mtime_ns == before and time.time() - before / 1e9 > 2:
                    break
            except OSError:
                pass
            time.sleep(1)
        copies.append(copy)
    BIN, TEST_HOST = copies
    with open(BIN, "rb") as handle:
        return sha256(handle.read())[:12]


def preflight(root):
    """The two binaries must come from one build: a host must open a board the CLI just made."""
    board = Board(root, "preflight").init()
    host = run([TEST_HOST, *common.board_host(board, "preflight", ["com.stress.none"])], stdin=b"", timeout=60,
               env=board.env)
    if host.code != 0:
        STATS.fail("setup", f"{TEST_HOST} cannot open a board made by {BIN} (two different builds?): exit {host.code} "
                            f"{one_line(host.error, 300)}")
        return False
    return True


def main():
    parser = argparse.ArgumentParser(description="Plugboard's stress suite.")
    parser.add_argument("--short", action="store_true", help="the CI run: about two minutes")
    parser.add_argument("--seed", type=int, default=None, help="random seed (printed; default: time)")
    parser.add_argument("--only", default=None, help="comma-separated scenarios: " + ", ".join(n for n, _ in SCENARIOS))
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    options = parser.parse_args()
    seed = options.seed if options.seed is not None else int(time.time())
    started = time.monotonic()
    only = set(options.only.split(",")) if options.only else None
    with common.scratch(STATS, "plugboard-stress-", options.keep) as root:
        digest = snapshot_binaries(root)
        built = time.strftime("%Y-%m-%d %H:%M", time.localtime(os.stat(BIN).st_mtime))
        log(f"{'short' if options.short else 'full'} run, seed {seed}, plugboard {BIN} (built {built}, sha256 {digest}…)")
        for name, function in SCENARIOS if preflight(root) else []:
            if only and name not in only:
                continue
            scenario_started = time.monotonic()
            try:
                function(root, options.short, random.Random(f"{seed}-{name}"))
            except Exception as error:  # a broken check is a failure, not a crash of Plugboard
                STATS.fail(name, f"the scenario stopped: {type(error).__name__}: {error}")
            log(f"{name} done in {time.monotonic() - scenario_started:.0f} s")
    log(f"{len(STATS.failures)} failures, {STATS.hangs} hangs, {time.monotonic() - started:.0f} s")
    if FLOOD_LINE:
        print(FLOOD_LINE, flush=True)
    if LOCKOUT_LINE:
        print(LOCKOUT_LINE, flush=True)
    if CHANGE_LINE:
        print(CHANGE_LINE, flush=True)
    print(STATS.summary(), flush=True)
    bad = STATS.lost or STATS.corrupt or STATS.crashes or STATS.hangs or STATS.failures
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
