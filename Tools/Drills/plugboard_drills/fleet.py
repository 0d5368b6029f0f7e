"""fleet: a fleet of plug-in hosts against one `plugboard serve`.

Starts `plugboard serve` on loopback and N `plugboard-test-host --server …` processes (each with a cache folder of
its own), then:

  1. kill     throws a kill switch with the CLI and times, from the commit (the audit row's time), until every host
              has deactivated the plug-in;
  2. enable   enables a plug-in and times until every host has loaded it;
  3. offline  stops the server and restarts every host: each must come up from its cache, saying so, with the killed
              plug-in still off; times each restart until the host runs;
  4. return   restarts the server on the same port and checks that every host reconnects and reports
              (`hosts.last_report` moves past the restart, and no report says "cached" any more).

Usage: Tools/Drills/drill fleet [--hosts N] [--streams N] [--trace] [--short] [--keep]

--short runs 10 hosts (CI). Binaries: $PLUGBOARD_BIN and $PLUGBOARD_TEST_HOST, else <repo>/.build/release/… when both
exist and --debug is not given, else <repo>/.build/debug/… (built with `swift build` when missing). Python 3
standard library only.

Then a rollout drill (the fleet's second part) with 20 hosts, half of them reading the board file and half
served, each able to run three releases of one plug-in compiled in: 1.0.0, 1.1.0 (healthy) and 1.2.0, whose
activation crashes the host process. A supervisor restarts a host that died, as systemd would.

  5. healthy   `plugboard rollout start … 1.1.0 --steps 25,50,100 --every 2s`: serve steps it to 100%, and every host
               ends on 1.1.0;
  6. crashing  `plugboard rollout start … 1.2.0 --steps 25,50,100 --every 60s`: the hosts of the first step's cohort
               crash; the guard (serve, four times a second) must abort at the first step, as plugboard/rollout-guard, with no
               more hosts crashed than the cohort holds, every host back on 1.1.0 and none crashing after that.

The last line is always
  fleet: N hosts, kill reached all in p50 A ms, p99 B ms, max C ms; D hosts restarted from cache; E loaded a killed plug-in; rollout: healthy reached 100% in S steps; crashing aborted at step T after H hosts crashed, all back in P ms
and, with --streams N, a last line after it
  fan-out: N streams, kill to all p50 A ms, p99 B ms; server CPU C ms per change; H hosts p99 D ms
(--streams N opens N lightweight host streams beside the real hosts, in a few Python processes: each reads the
pushed snapshots and verifies them as a host does, see plugboard_drills.streams; the kill is timed from the commit
until each stream verified a snapshot with the plug-in killed; C is the server's CPU time from the kill until every
host and stream had it); the exit status is non-zero when a step failed (each failure on a line of its own above it), when fewer than N
hosts restarted from cache, or when E is not 0. --skip-rollout leaves the rollout drill out; --only-rollout runs only it.

--relay (or --relay proxy) puts nginx with Examples/nginx/plugboard.conf between the streams and the server (one
upstream stream per client stream); --relay nchan puts nginx with Nchan and Examples/nginx/plugboard-relay.conf there
instead, the server started with --relay-publish, so that the server keeps one upstream stream for the environment
(the hosts stay direct in both). Either way the streams verify every snapshot: the relay is not trusted.

--trace sets $PLUGBOARD_TRACE_FANOUT for the server and the hosts, which then write when each stage of a change
happened (see FanoutTrace in PlugboardModel), and prints where the kill's time went: commit to the server noticing,
to the snapshot signed, to the event written, to each host's event, fetch (when it read one), verification, and
deactivation (medians over the hosts).
"""

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone

from plugboard_drills import common
from plugboard_drills.common import event_is, percentile

VICTIM = "com.fleet.victim"
STEADY = "com.fleet.steady"
LATE = "com.fleet.late"
REPORT = common.Report("fleet")


def parse_time(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def start_host(binary, index, url, token, key, cache):
    """One host process of the kill drill."""
    host_id = f"fleet-{index:03d}"
    return common.Host(binary, common.served_host(url, token, key, cache, host_id, [VICTIM, STEADY, LATE]), name=host_id)


def main():
    def own(parser):
        parser.add_argument("--debug", action="store_true", help="use the debug binaries even when release ones exist")
        parser.add_argument("--skip-rollout", action="store_true", help="leave the rollout drill out")
        parser.add_argument("--only-rollout", action="store_true", help="run only the rollout drill")
        parser.add_argument("--streams", type=int, default=0, help="lightweight host streams beside the hosts")
        parser.add_argument("--trace", action="store_true", help="print where the kill's time goes")
        parser.add_argument("--relay", nargs="?", const="proxy", choices=("proxy", "nchan"),
                            help="the streams go through nginx: proxy (the default) with Examples/nginx/plugboard.conf, nchan "
                                 "with Nchan and Examples/nginx/plugboard-relay.conf (serve --relay-publish)")

    arguments, count = common.sized_options("A fleet of hosts against plugboard serve.", "hosts", 50, 10, 1000, own)
    plugboard, host_binary = common.binaries(REPORT, release=not arguments.debug)
    if arguments.only_rollout:
        print(rollout_drill(plugboard, host_binary, arguments.keep), flush=True)
        return 1 if REPORT.failures else 0
    if arguments.trace:
        os.environ["PLUGBOARD_TRACE_FANOUT"] = "1"
    figures = {"kill": [], "from cache": 0, "loaded killed": set(), "streams": arguments.streams, "relay": arguments.relay}
    with common.scratch(REPORT, "plugboard-fleet-", arguments.keep) as root:
        kill_drill(common.Board(os.path.join(root, "board.sqlite"), plugboard), host_binary, count, figures)
    kill_latencies, restarted_from_cache, loaded_killed = figures["kill"], figures["from cache"], figures["loaded killed"]
    if restarted_from_cache < count:
        REPORT.failures.append("not every host restarted from cache")
    if loaded_killed:
        REPORT.failures.append(f"hosts loaded a killed plug-in: {sorted(loaded_killed)}")
    p50 = percentile(kill_latencies, 0.5)
    p99 = percentile(kill_latencies, 0.99)
    top = max(kill_latencies) if kill_latencies else float("nan")
    summary = (f"fleet: {count} hosts, kill reached all in p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {top:.0f} ms; "
               f"{restarted_from_cache} hosts restarted from cache; {len(loaded_killed)} loaded a killed plug-in")
    if arguments.skip_rollout:
        print(summary, flush=True)
    else:
        print(f"{summary}; {rollout_drill(plugboard, host_binary, arguments.keep)}", flush=True)
    if arguments.streams:
        fanout = figures.get("fan-out", [])
        print(f"fan-out: {arguments.streams} streams, kill to all p50 {percentile(fanout, 0.5):.0f} ms, p99 "
              f"{percentile(fanout, 0.99):.0f} ms; server CPU {figures.get('server cpu', float('nan')):.0f} ms per change; "
              f"{count} hosts p99 {p99:.0f} ms", flush=True)
    return 1 if REPORT.failures else 0


def kill_drill(board, host_binary, count, figures):
    """Steps 1 to 4 of the module's description, their figures into `figures`."""
    hosts = []
    server = None
    streams = relay = None
    loaded_killed = figures["loaded killed"]
    try:
        board.init()
        for plugin in (VICTIM, STEADY, LATE):
            board.ok("plugin", "register", board.manifest(plugin, "1.0.0", name=plugin))
        board.ok("plugin", "enable", VICTIM)
        board.ok("plugin", "enable", STEADY)
        token = board.host_token("fleet")
        key = board.board_key()
        poll = os.environ.get("FLEET_POLL_MS", "20")
        nchan = figures["streams"] and figures["relay"] == "nchan"
        relay_port = common_streams().free_port() if nchan else None
        publish = ("--relay-publish", f"http://127.0.0.1:{relay_port}/plugboard-publish/") if nchan else ()
        server = common.Server(board, "--poll-ms", poll, *publish).started()
        url, address = server.url, server.address
        print(f"fleet: server at {url}, {count} hosts, binaries {os.path.dirname(board.binary)}", flush=True)
        caches = [os.path.join(board.folder, f"cache-{index:03d}") for index in range(count)]
        hosts = [start_host(host_binary, index, url, token, key, caches[index]) for index in range(count)]
        deadline = time.time() + 60
        for host in hosts:
            if (host.first(event_is("loaded", STEADY), timeout=max(0.1, deadline - time.time())) is None
                    or host.first(event_is("loaded", VICTIM), timeout=max(0.1, deadline - time.time())) is None):
                REPORT.fail(f"{host.name} did not load {STEADY} and {VICTIM}")
        if REPORT.failures:
            raise common.DrillError("the fleet did not start")
        print(f"fleet: {count} hosts running", flush=True)
        if figures["streams"]:
            if figures["relay"]:
                relay = common_streams().Relay(common.REPO, address, os.path.join(board.folder, "nginx"), nchan=nchan, port=relay_port)
                print(f"fleet: the streams go through nginx{' with Nchan' if nchan else ''} at {relay.address}", flush=True)
            streams = common_streams().Streams(figures["streams"], relay.address if relay else address, token, key, plugin=VICTIM,
                                               path="/api/host/relay-stream" if nchan else "/api/host/stream?push=snapshot")
            if not streams.wait_connected(120):
                REPORT.fail(f"only {streams.connected()} of {figures['streams']} streams connected")
            held = common_streams().server_streams(url, token)
            print(f"fleet: {figures['streams']} lightweight streams connected; the server holds {held[0]} host streams and "
                  f"{held[1]} relay channels", flush=True)
        time.sleep(0.5)  # every stream connected and idle

        def reached(plugin, kind, before):
            """The times each host reported `kind` of `plugin` after `before`; a failure for each that did not."""
            seen_at = []
            for host in hosts:
                seen = host.first(event_is(kind, plugin), after=before, timeout=30)
                if seen is None:
                    REPORT.fail(f"{host.name} did not {'deactivate' if kind == 'deactivated' else 'load'} {plugin}")
                else:
                    seen_at.append(seen[0])
            return seen_at

        def committed(plugin):
            """When the last change of `plugin` was committed (its audit row's time)."""
            audit = board.ok("audit", "--json", "--target", plugin, "--limit", "1").text
            return parse_time(json.loads(audit.strip().splitlines()[-1])["at"])

        # 1. The kill switch, from the commit to each host's deactivation.
        # (The audit row is read after every host has answered, so that no process of ours competes with them.)
        cpu_before = {"server": common.cpu_ms(server.pid), "hosts": sum(common.cpu_ms(host.process.pid) for host in hosts),
                      "relay": common.cpu_ms(relay.pid) if relay else 0}
        before = time.time()
        board.ok("plugin", "kill", VICTIM, "--reason", "fleet drill")
        seen_at = reached(VICTIM, "deactivated", before)
        if streams is not None:
            common.eventually(lambda: streams.killed() >= figures["streams"], 30)
            figures["server cpu"] = common.cpu_ms(server.pid) - cpu_before["server"]
            if relay:
                figures["relay cpu"] = common.cpu_ms(relay.pid) - cpu_before["relay"]
            results = streams.stop()
            streams = None
        time.sleep(0.4)  # the reports too
        cpu = {"server": common.cpu_ms(server.pid) - cpu_before["server"],
               "hosts": sum(common.cpu_ms(host.process.pid) for host in hosts) - cpu_before["hosts"]}
        killed_at = committed(VICTIM)
        kill_latencies = figures["kill"] = [(stamp - killed_at) * 1000 for stamp in seen_at]
        kill_window = (before, time.time())
        if figures["streams"]:
            figures["fan-out"] = [(stamp - killed_at) * 1000 for stamp in results["killed"].values()]
            missing = figures["streams"] - len(results["killed"])
            if missing:
                REPORT.fail(f"{missing} of {figures['streams']} streams did not verify the kill")
            print(f"fleet: kill reached {len(results['killed'])}/{figures['streams']} streams (verified): p50 "
                  f"{percentile(figures['fan-out'], 0.5):.0f} ms, p99 {percentile(figures['fan-out'], 0.99):.0f} ms; "
                  f"{results['refused']} snapshots refused, {results['notices']} notices without a snapshot, "
                  f"{results['failed']} streams failed; server CPU {figures['server cpu']:.0f} ms"
                  + (f", nginx CPU {figures['relay cpu']:.0f} ms" if relay else ""), flush=True)
        if kill_latencies:
            print(f"fleet: kill reached {len(kill_latencies)}/{count} hosts: min {min(kill_latencies):.0f} ms, p50 {percentile(kill_latencies, 0.5):.0f} ms, "
                  f"p99 {percentile(kill_latencies, 0.99):.0f} ms, max {max(kill_latencies):.0f} ms; CPU for the change: server "
                  f"{cpu['server']:.0f} ms, hosts {cpu['hosts'] / count:.1f} ms each", flush=True)

        # 2. An enablement, from the commit to each host's load.
        before = time.time()
        board.ok("plugin", "enable", LATE)
        seen_at = reached(LATE, "loaded", before)
        enabled_at = committed(LATE)
        enable_latencies = [(stamp - enabled_at) * 1000 for stamp in seen_at]
        if enable_latencies:
            print(f"fleet: enable reached {len(enable_latencies)}/{count} hosts: p50 {percentile(enable_latencies, 0.5):.0f} ms, "
                  f"p99 {percentile(enable_latencies, 0.99):.0f} ms, max {max(enable_latencies):.0f} ms", flush=True)
        time.sleep(0.5)  # the last load reports reach the board

        # 3. The server goes away; every host restarts from its cache.
        server.stop()
        server_errors, server = server.errors, None
        for host in hosts:
            if host.any_event(event_is("loaded", VICTIM), after=killed_at):
                loaded_killed.add(host.name)
            host.stop(timeout=20)
        if os.environ.get("PLUGBOARD_TRACE_FANOUT"):
            print(trace_breakdown(server_errors, hosts, kill_window, killed_at), flush=True)
        restart_times = []
        hosts = [start_host(host_binary, index, url, token, key, caches[index]) for index in range(count)]
        for host in hosts:
            started = host.first(event_is("started"), timeout=30)
            cached = host.first(lambda e: e.get("event") == "warning" and "cached snapshot" in e.get("message", ""), timeout=5)
            steady = host.first(event_is("loaded", STEADY), timeout=5)
            if started is None or cached is None or steady is None:
                REPORT.fail(f"{host.name} did not start from its cache (started {started is not None}, said cached "
                            f"{cached is not None}, loaded {STEADY} {steady is not None})")
                continue
            figures["from cache"] += 1
            restart_times.append((max(started[0], steady[0]) - host.spawned) * 1000)
        for host in hosts:
            if host.any_event(event_is("loaded", VICTIM)):
                loaded_killed.add(host.name)
        if restart_times:
            print(f"fleet: {figures['from cache']}/{count} hosts restarted from cache, running in p50 "
                  f"{percentile(restart_times, 0.5):.0f} ms, max {max(restart_times):.0f} ms (process start included)", flush=True)

        # 4. The server comes back on the same port: every host reconnects and reports.
        back = time.time()
        server = common.Server(board, "--poll-ms", poll, listen=address).started()
        pending = {host.name for host in hosts}

        def reported():
            """Every host reported since the server came back, from the board (not its cache)."""
            # Hosts' reports are telemetry: the server keeps them in the file beside the board, not in the board.
            if not os.path.exists(f"{board.path}.telemetry"):
                return False
            connection = sqlite3.connect(f"file:{board.path}.telemetry?mode=ro", uri=True, timeout=10)
            try:
                rows = connection.execute("SELECT host_id, last_report, source FROM hosts").fetchall()
            except sqlite3.OperationalError:
                rows = []
            finally:
                connection.close()
            for host_id, last_report, source in rows:
                if host_id in pending and parse_time(last_report) >= back and "cached" not in (source or ""):
                    pending.discard(host_id)
            return not pending

        if not common.eventually(reported, 60):
            REPORT.fail(f"{len(pending)} hosts did not report after the server came back: {sorted(pending)[:5]}")
        else:
            print(f"fleet: all {count} hosts reconnected and reported {time.time() - back:.1f} s after the server came back",
                  flush=True)
        # When each host noticed the server again (its "changed" line on reconnection): spread by the jittered backoff.
        noticed = sorted(seen[0] - back for seen in (host.first(event_is("changed"), after=back, timeout=0.1) for host in hosts)
                         if seen is not None)
        if len(noticed) > 1:
            gaps = [later - earlier for earlier, later in zip(noticed, noticed[1:])]
            print(f"fleet: reconnections spread over {1000 * (noticed[-1] - noticed[0]):.0f} ms (first {1000 * noticed[0]:.0f} ms, "
                  f"last {1000 * noticed[-1]:.0f} ms after the restart; median gap between hosts "
                  f"{1000 * sorted(gaps)[len(gaps) // 2]:.1f} ms)", flush=True)
        for row in board.json("plugin", "status", VICTIM):
            if row.get("host_id", "").startswith("fleet-") and row.get("state") == "loaded":
                loaded_killed.add(row["host_id"])
    except Exception as error:  # a broken step is a failure of the run, not a crash of the tool
        REPORT.fail(f"{type(error).__name__}: {error}")
    finally:
        if streams is not None:
            streams.stop()
        if relay is not None:
            relay.stop()
        for host in hosts:
            host.stop(timeout=20)
        if server is not None:
            server.stop()


def common_streams():
    """The stream clients' module (it needs the `cryptography` package, which only --streams does)."""
    from plugboard_drills import streams
    return streams


def trace_lines(text, window):
    """The `fanout-trace` lines of `text` in the time window: {stage: [(ms, detail)]}."""
    stages = {}
    for line in text.splitlines():
        parts = line.split(" ", 3)
        if len(parts) >= 3 and parts[0] == "fanout-trace":
            at = float(parts[2])
            if window[0] * 1000 <= at <= window[1] * 1000:
                stages.setdefault(parts[1], []).append((at, parts[3] if len(parts) > 3 else ""))
    return stages


def trace_breakdown(server_errors, hosts, window, committed):
    """Where the kill's time went, from the trace lines of the server and the hosts (medians over the hosts)."""
    server = trace_lines(b"".join(server_errors).decode("utf-8", "replace"), window)
    start = committed * 1000

    def first(stages, name):
        return stages[name][0][0] if stages.get(name) else None

    noticed, signed, written = first(server, "noticed"), first(server, "signed"), first(server, "written")
    steps = {"event": [], "fetched": [], "verified": [], "deactivated": []}
    own = []  # each host's own stages, after its event
    for host in hosts:
        stages = trace_lines(host.stderr, window)
        done = host.first(event_is("deactivated", VICTIM), after=window[0], timeout=0)
        for name in ("event", "fetched", "verified"):
            if first(stages, name) is not None:
                steps[name].append(first(stages, name))
        if done is not None:
            steps["deactivated"].append(done[0] * 1000)
        if done is not None and first(stages, "event") is not None and first(stages, "verified") is not None:
            own.append((first(stages, "verified") - first(stages, "event"), done[0] * 1000 - first(stages, "verified")))
    median = {name: percentile(values, 0.5) for name, values in steps.items() if values}
    marks = [("commit", start), ("server noticed", noticed), ("snapshot signed", signed), ("event written", written),
             ("host event (median)", median.get("event")), ("host fetched (median)", median.get("fetched")),
             ("host verified (median)", median.get("verified")), ("host deactivated (median)", median.get("deactivated"))]
    present = [(name, at) for name, at in marks if at is not None]
    parts = [f"{name} +{at - previous:.1f}" for (name, at), (_, previous) in zip(present[1:], present)]
    spans = ""
    if own:
        spans = (f"; per host, event to verified min {min(a for a, _ in own):.1f} / median {percentile([a for a, _ in own], 0.5):.1f} ms, "
                 f"verified to deactivated min {min(b for _, b in own):.1f} / median {percentile([b for _, b in own], 0.5):.1f} ms")
    return (f"fleet: trace of the kill (ms after the previous mark): {'; '.join(parts)}; total {present[-1][1] - start:.0f} ms"
            f"{spans}")


ROLLOUT_PLUGIN = "com.fleet.release"
HEALTHY, CRASHING, BASE = "1.1.0", "1.2.0", "1.0.0"


def cohort_bucket(plugin, host_id):
    """The host's rollout bucket (0-9999), as hosts compute it: SHA-256 of plug-in id, newline, host id."""
    digest = hashlib.sha256(f"{plugin}\n{host_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 10000


class SupervisedHost(common.Events):
    """A host process restarted when it dies (as systemd would); its events kept across its processes."""

    def __init__(self, arguments, host_id):
        super().__init__()
        self.arguments = arguments
        self.host_id = host_id
        self.crashes = []
        self.stopping = False
        self.process = None
        self._spawn()
        self.monitor = threading.Thread(target=self._supervise, daemon=True)
        self.monitor.start()

    def _spawn(self):
        # No backtrace on a crash: the runtime's backtracer would take seconds to symbolicate.
        environment = dict(os.environ, SWIFT_BACKTRACE="enable=no")
        process = subprocess.Popen(self.arguments, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   text=True, env=environment)
        self.read(process)
        with self.lock:
            self.process = process

    def _supervise(self):
        while True:
            with self.lock:
                process = self.process
            code = process.wait()
            with self.lock:
                if self.stopping:
                    return
                self.crashes.append((time.time(), code))
                self.lock.notify_all()
            time.sleep(0.2)
            with self.lock:
                if self.stopping:
                    return
            self._spawn()

    def wait_for(self, match, after=0.0, timeout=60.0):
        """The time of the first event at or after `after` that `match` accepts, or None after `timeout`."""
        seen = self.first(match, after=after, timeout=timeout)
        return seen[0] if seen else None

    def running_version(self):
        """The version of the last loaded or deactivated event of the plug-in: what runs now (None: nothing)."""
        with self.lock:
            for _, event in reversed(self.events):
                if event.get("plugin") != ROLLOUT_PLUGIN:
                    continue
                if event.get("event") == "loaded":
                    return event.get("version")
                if event.get("event") in ("deactivated", "failed"):
                    return None
        return None

    def stop(self):
        with self.lock:
            self.stopping = True
            process = self.process
        common.stop(process, 20)


def rollout_drill(plugboard, host_binary, keep):
    """Steps 5 and 6 of the module's description; returns the `rollout: …` part of the last line."""
    with common.scratch(REPORT, "plugboard-fleet-rollout-", keep) as root:
        return rollout_steps(common.Board(os.path.join(root, "board.sqlite"), plugboard), host_binary)


def rollout_steps(board, host_binary):
    hosts = []
    server = None
    result = "rollout: did not run to its end"

    def register(version):
        board.ok("plugin", "register", board.manifest(ROLLOUT_PLUGIN, version, name="release drill"))

    def roll_out(version, every, timeout):
        """Starts the rollout of `version` in steps of 25, 50 and 100% `every` apart; its status once it ended (or
        after `timeout` s)."""
        board.ok("rollout", "start", ROLLOUT_PLUGIN, version, "--steps", "25,50,100", "--every", every,
                 "--max-failure-rate", "10")

        def status():
            now = board.json("rollout", "status", ROLLOUT_PLUGIN)[0]
            return now if now["rollout"]["state"] != "running" else None

        return common.eventually(status, timeout) or board.json("rollout", "status", ROLLOUT_PLUGIN)[0]

    try:
        board.init()
        register(BASE)
        board.ok("plugin", "enable", ROLLOUT_PLUGIN)
        # Put the plug-in under rollouts: from here on its later releases wait for a rollout of their own.
        board.ok("rollout", "start", ROLLOUT_PLUGIN, BASE, "--steps", "100", "--every", "1s")
        register(HEALTHY)
        register(CRASHING)
        token = board.host_token("rollout")
        key = board.board_key()
        server = common.Server(board, "--poll-ms", "20").started()
        releases = ["--versions", ",".join([BASE, HEALTHY, CRASHING]), "--crash-on-activate", f"{ROLLOUT_PLUGIN}@{CRASHING}"]
        for index in range(10):
            host_id = f"rollout-local-{index:02d}"
            hosts.append(SupervisedHost([host_binary, *common.board_host(board, host_id, [ROLLOUT_PLUGIN]), "--state",
                                         os.path.join(board.folder, host_id), *releases], host_id))
        for index in range(10):
            host_id = f"rollout-served-{index:02d}"
            hosts.append(SupervisedHost([host_binary, *common.served_host(server.url, token, key, os.path.join(board.folder, host_id),
                                                                          host_id, [ROLLOUT_PLUGIN]), *releases], host_id))
        for host in hosts:
            if host.wait_for(lambda e: e.get("event") == "loaded" and e.get("version") == BASE) is None:
                REPORT.fail(f"{host.host_id} did not load {ROLLOUT_PLUGIN}@{BASE}")
        if REPORT.failures:
            raise common.DrillError("the rollout fleet did not start")
        print(f"fleet: rollout drill: {len(hosts)} hosts ({sum(1 for h in hosts if 'local' in h.host_id)} of the board file, "
              f"the others served) run {ROLLOUT_PLUGIN}@{BASE}", flush=True)

        # 5. The healthy release, step by step to every host.
        started = time.time()
        healthy = roll_out(HEALTHY, "2s", 90)
        if healthy["rollout"]["state"] != "completed":
            REPORT.fail(f"the healthy rollout did not complete: {healthy['rollout']['state']} at {healthy['rollout']['steps'][healthy['rollout']['step']]}%"
                 f" ({healthy.get('end_reason') or 'no reason'})")
        healthy_steps = len(healthy["history"])
        for host in hosts:
            if host.wait_for(lambda e: e.get("event") == "loaded" and e.get("version") == HEALTHY, after=started, timeout=30) is None:
                REPORT.fail(f"{host.host_id} did not move to {HEALTHY}")
        print(f"fleet: healthy rollout of {HEALTHY} completed in {healthy_steps} steps, {time.time() - started:.1f} s; "
              f"{sum(1 for h in hosts if h.running_version() == HEALTHY)}/{len(hosts)} hosts run it", flush=True)

        # 6. The crashing release: the guard must stop it at its first step.
        cohort = [host.host_id for host in hosts if cohort_bucket(ROLLOUT_PLUGIN, host.host_id) < 2500]
        crashes_before = {host.host_id: len(host.crashes) for host in hosts}
        started = time.time()
        crashing = roll_out(CRASHING, "60s", 60)
        rollout = crashing["rollout"]
        aborted_step = rollout["step"] + 1
        if rollout["state"] != "aborted":
            REPORT.fail(f"the guard did not abort the crashing rollout within 60 s (state {rollout['state']})")
            raise common.DrillError("no abort")
        if crashing.get("ended_by") != "plugboard/rollout-guard":
            REPORT.fail(f"the crashing rollout was aborted by {crashing.get('ended_by')}, not by the guard")
        if aborted_step != 1:
            REPORT.fail(f"the guard aborted at step {aborted_step}, not at the first")
        aborted_at = parse_time(crashing["ended_at"])
        print(f"fleet: the guard aborted {CRASHING} {aborted_at - started:.1f} s after the start: {crashing.get('end_reason')}",
              flush=True)
        back = []
        for host in hosts:
            if host.host_id not in cohort:
                continue  # never left 1.1.0
            stamp = host.wait_for(lambda e: e.get("event") == "loaded" and e.get("version") == HEALTHY, after=started, timeout=30)
            if stamp is None:
                REPORT.fail(f"{host.host_id} did not return to {HEALTHY} after the abort")
            else:
                back.append(max(0.0, stamp - aborted_at) * 1000)
        time.sleep(3)  # a host that still crashes would do so again within this
        crashed = sorted(host.host_id for host in hosts if len(host.crashes) > crashes_before[host.host_id])
        late = sorted(host.host_id for host in hosts for stamp, _ in host.crashes if stamp > aborted_at + 2)
        outside = sorted(set(crashed) - set(cohort))
        if not crashed:
            REPORT.fail("no host crashed: the crashing release never ran")
        if outside:
            REPORT.fail(f"hosts outside the first step's cohort crashed: {outside}")
        if late:
            REPORT.fail(f"hosts kept crashing after the abort: {sorted(set(late))}")
        wrong = sorted(host.host_id for host in hosts if host.running_version() != HEALTHY)
        if wrong:
            REPORT.fail(f"hosts do not run {HEALTHY} at the end: {wrong}")
        total = sum(len(host.crashes) - crashes_before[host.host_id] for host in hosts)
        print(f"fleet: cohort of the first step: {len(cohort)} hosts ({', '.join(cohort)}); {len(crashed)} crashed ({total} crashes in all); "
              f"back on {HEALTHY} in max {max(back) if back else float('nan'):.0f} ms after the abort", flush=True)
        audit = board.ok("audit", "verify").text
        if "intact" not in audit:
            REPORT.fail(f"audit verify: {audit.strip()}")
        result = (f"rollout: healthy reached 100% in {healthy_steps} steps; crashing aborted at step {aborted_step} after "
                  f"{len(crashed)} hosts crashed, all back in {max(back) if back else float('nan'):.0f} ms")
    except Exception as error:  # a broken step is a failure of the run, not a crash of the tool
        REPORT.fail(f"rollout drill: {type(error).__name__}: {error}")
    finally:
        for host in hosts:
            host.stop()
        if server is not None:
            server.stop()
    return result


if __name__ == "__main__":
    sys.exit(main())
