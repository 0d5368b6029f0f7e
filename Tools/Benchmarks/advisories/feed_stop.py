#!/usr/bin/env python3
"""A `stop` from a subscribed advisory feed reaching served hosts, measured with real processes.

A publisher's board publishes a signed feed (`plugboard advisory feed publish`) into a folder that a static HTTP server
(Python's, on loopback) serves. A subscriber's board subscribes to it (`advisory feed subscribe --interval 1m`, the
shortest interval) and is served by `plugboard serve --feed-allow-private`; --hosts `plugboard-test-host` processes
follow that server (signed snapshots, the board key pinned) and load --rounds plug-ins plus one more, `kill`.

1. The kill switch's latency, in the same run: `plugboard plugin kill com.bench.kill` on the subscriber's board; the time
   from the CLI's exit to the last host printing `deactivated`.
2. Each round: the publisher imports a critical advisory for the round's plug-in (critical: `stop`) and publishes the
   feed again (written beside, then renamed over the old one); from that moment, the time until `serve` logs that it
   applied the feed (waiting for the interval) and the time from then to the last host printing `deactivated`.

The goal: every round's last host within the interval plus the kill switch's latency of step 1.

Usage: Tools/Benchmarks/advisories/feed_stop.py [--hosts 50] [--rounds 3] [--bin .build/release]
Prints one line per measure and, last, `feed-stop: …`.
"""
import argparse, http.server, json, os, random, re, shutil, subprocess, sys, tempfile, threading, time

p = argparse.ArgumentParser()
p.add_argument("--hosts", type=int, default=50)
p.add_argument("--rounds", type=int, default=3)
p.add_argument("--bin", default=".build/release")
p.add_argument("--host-bin", help="the folder of plugboard-test-host, when not --bin")
args = p.parse_args()
CLI = os.path.abspath(os.path.join(args.bin, "plugboard"))
HOST = os.path.abspath(os.path.join(args.host_bin or args.bin, "plugboard-test-host"))
INTERVAL = 60.0
work = tempfile.mkdtemp(prefix="plugboard-feed-stop-")
env = {k: v for k, v in os.environ.items() if not k.startswith("PLUGBOARD_")}
children = []
ENV_NAME = "production"
targets = [f"com.bench.stop{i}" for i in range(args.rounds)]
KILLED = "com.bench.kill"


def cli(board, *a):
    r = subprocess.run([CLI, *a, "--db", board], capture_output=True, env=env, text=True)
    if r.returncode != 0:
        sys.exit(f"plugboard {' '.join(a)} failed: {r.stderr}")
    return r.stdout


def advisory(n, plugin):
    return {
        "schema_version": "1.7.0", "id": f"PBSA-2026-{9000 + n}", "modified": f"2026-11-2{n % 10}T10:00:00Z",
        "summary": f"{plugin} sends a token to a third party", "database_specific": {"severity": "CRITICAL"},
        "affected": [{"package": {"ecosystem": "Plugboard", "name": plugin},
                      "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}]}]}],
    }


class Lines:
    """A child's stdout or stderr lines, each with the monotonic time it was read."""

    def __init__(self, stream):
        self.lines, self.cond = [], threading.Condition()
        threading.Thread(target=self.read, args=(stream,), daemon=True).start()

    def read(self, stream):
        for line in stream:
            with self.cond:
                self.lines.append((time.monotonic(), line))
                self.cond.notify_all()

    def wait(self, predicate, timeout, what, start=0):
        """The time of the first line from index `start` that `predicate` accepts."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for at, line in self.lines[start:]:
                    if predicate(line):
                        return at
                left = deadline - time.monotonic()
                if left <= 0:
                    sys.exit(f"timed out waiting for {what}")
                self.cond.wait(left)


def deactivated(plugin):
    return lambda line: '"event":"deactivated"' in line and f'"plugin":"{plugin}"' in line


try:
    # The publisher, its key and its first feed (one advisory of a plug-in no host runs).
    publisher, site = os.path.join(work, "publisher.sqlite"), os.path.join(work, "site")
    os.makedirs(site)
    key = os.path.join(work, "feed.key")
    cli(publisher, "init")
    public_key = json.loads(cli(publisher, "signing-key", "generate", "--out", key, "--json"))["publicKey"]
    documents = os.path.join(work, "documents")
    os.makedirs(documents)

    def publish(n, plugin):
        path = os.path.join(documents, f"{n}.json")
        with open(path, "w") as f:
            json.dump(advisory(n, plugin), f)
        cli(publisher, "advisory", "import", path)
        cli(publisher, "advisory", "feed", "publish", "--key", key, "--out", os.path.join(site, "next.json"), "--expires", "7d")
        os.rename(os.path.join(site, "next.json"), os.path.join(site, "feed.json"))

    publish(0, "com.bench.nobody")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=site, **k)

        def log_message(self, *a):
            pass

    files = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=files.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{files.server_address[1]}/feed.json"

    # The subscriber: the plug-ins, enabled; a hosts token; the subscription; serve.
    board = os.path.join(work, "board.sqlite")
    cli(board, "init")
    manifests = os.path.join(work, "manifests")
    os.makedirs(manifests)
    for plugin in targets + [KILLED]:
        with open(os.path.join(manifests, f"{plugin}.json"), "w") as f:
            json.dump({"id": plugin, "name": plugin, "version": "1.0.0", "host": ">=1.0.0"}, f)
    cli(board, "plugin", "register", manifests)
    for plugin in targets + [KILLED]:
        cli(board, "plugin", "enable", plugin, "--env", ENV_NAME)
    token = json.loads(cli(board, "token", "create", "--name", "hosts", "--for", "hosts", "--env", ENV_NAME, "--json"))["token"]
    board_key = json.loads(cli(board, "board-key", "show", "--json"))["keys"][0]["public_key"]
    cli(board, "advisory", "feed", "subscribe", url, "--key", public_key, "--name", "vendor", "--interval", "1m")
    server = subprocess.Popen(
        [CLI, "serve", "--db", board, "--listen", "127.0.0.1:0", "--log-level", "notice", "--feed-allow-private"],
        cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    children.append(server)
    out, log = Lines(server.stdout), Lines(server.stderr)
    out.wait(lambda line: "Serving the board at" in line, 300, "serve to start")
    base = "http://127.0.0.1:" + re.search(r"127\.0\.0\.1:(\d+)", next(line for _, line in out.lines if "Serving" in line)).group(1)
    log.wait(lambda line: "advisory feed applied" in line, 120, "serve to apply the first feed")

    # The hosts, each loading every plug-in.
    hosts = []
    for i in range(args.hosts):
        host = subprocess.Popen(
            [HOST, "--server", base, "--token", token, "--board-key", board_key, "--cache", os.path.join(work, f"cache-{i}"),
             "--plugins", ",".join(targets + [KILLED]), "--versions", "1.0.0", "--host-id", f"h-{i:03d}", "--env", ENV_NAME],
            cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        children.append(host)
        hosts.append(Lines(host.stdout))
    for lines in hosts:
        for plugin in targets + [KILLED]:
            lines.wait(lambda line, plugin=plugin: '"event":"loaded"' in line and f'"plugin":"{plugin}"' in line, 600, "hosts to load")
    print(f"{args.hosts} hosts loaded {len(targets) + 1} plug-ins each", flush=True)

    # 1. The kill switch's latency.
    marks = [len(lines.lines) for lines in hosts]
    cli(board, "plugin", "kill", KILLED, "--reason", "benchmark")
    killed = time.monotonic()
    kill = max(lines.wait(deactivated(KILLED), 600, "the kill", m) for lines, m in zip(hosts, marks)) - killed
    print(f"kill switch: CLI exit to the last of {args.hosts} hosts deactivated: {kill * 1000:.0f} ms", flush=True)

    # 2. Each round: a stop published in the feed.
    results = []
    for n, plugin in enumerate(targets, start=1):
        # Publish at a random moment of the interval.
        time.sleep(random.uniform(0, INTERVAL))
        marks = [len(lines.lines) for lines in hosts]
        log_mark = len(log.lines)
        publish(n, plugin)
        published = time.monotonic()
        applied = log.wait(lambda line: "advisory feed applied" in line, INTERVAL * 3, "serve to apply the feed", log_mark)
        last = max(lines.wait(deactivated(plugin), 600, f"{plugin} stopped", m) for lines, m in zip(hosts, marks))
        total, waited, spread = last - published, applied - published, last - applied
        within = total <= INTERVAL + kill
        results.append((total, waited, spread, within))
        print(
            f"round {n}: published to applied {waited:.1f} s (the interval: {INTERVAL:.0f} s), applied to the last of "
            f"{args.hosts} hosts deactivated {spread * 1000:.0f} ms; in all {total:.1f} s "
            f"({'within' if within else 'over'} interval + kill latency = {INTERVAL + kill:.1f} s)", flush=True)
    worst = max(r[2] for r in results)
    print(
        f"feed-stop: {args.hosts} hosts, interval {INTERVAL:.0f} s, kill switch {kill * 1000:.0f} ms; feed applied to the last "
        f"host deactivated at most {worst * 1000:.0f} ms; {sum(r[3] for r in results)} of {len(results)} rounds within "
        f"interval + kill latency", flush=True)
finally:
    for child in children:
        child.kill()
    shutil.rmtree(work, ignore_errors=True)
