#!/usr/bin/env python3
"""The web console's pages at scale: server time per page on a board of 10,000 plug-ins and 200 reporting hosts.

Makes the board with `audit-scale-board` (Tools/Benchmarks/AuditScale: 10,000 plug-ins, --rows audit rows; kept in
--work between runs), copies it to a scratch folder, starts `plugboard serve --admin` on it, has --hosts hosts report
--per-host plug-ins each through /api/host/report (as served hosts do), signs in to the console with an access token,
and times each page over one kept-alive connection on loopback: the median and the 95th percentile of --runs requests
after two warm-up ones. The time is the whole request as the client sees it, on loopback, so it bounds the server's.

Build first (release: the figures in the README are of release builds):
    swift build -c release --product plugboard
    PLUGBOARD_BENCHMARKS=1 swift build -c release --product audit-scale-board
Usage: Tools/Benchmarks/console/run.py [--bin .build/release] [--plugins 10000] [--rows 100000] [--hosts 200]
                                       [--per-host 20] [--runs 30] [--work /tmp/plugboard-audit-scale]
"""
import argparse, http.client, json, os, shutil, socket, statistics, subprocess, sys, tempfile, time, urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "audit-scale"))
import scale_board

p = argparse.ArgumentParser()
p.add_argument("--bin", default=".build/release")
p.add_argument("--plugins", type=int, default=10_000)
p.add_argument("--rows", type=int, default=100_000)
p.add_argument("--hosts", type=int, default=200)
p.add_argument("--per-host", type=int, default=20)
p.add_argument("--runs", type=int, default=30)
p.add_argument("--work", default="/tmp/plugboard-audit-scale")
args = p.parse_args()

cli = os.path.abspath(os.path.join(args.bin, "plugboard"))
source = scale_board.board(args.bin, args.work, args.plugins, args.rows)
scratch = tempfile.mkdtemp(prefix="plugboard-console-bench-")
board = os.path.join(scratch, "board.sqlite")
for suffix in ("", ".key", ".board-key"):
    if os.path.exists(source + suffix):
        shutil.copy2(source + suffix, board + suffix)
env = scale_board.environment()
env["PLUGBOARD_DB"] = board


def plugboard(*arguments):
    out = subprocess.run([cli, *arguments, "--json"], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"plugboard {' '.join(arguments)}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


server = None
try:
    access = plugboard("access-token", "create", "--name", "console-bench")["token"]
    hosts_token = plugboard("token", "create", "--name", "bench-hosts", "--env", "default", "--for", "hosts")["token"]
    port = free_port()
    server = subprocess.Popen([cli, "serve", "--admin", "--listen", f"127.0.0.1:{port}"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                sys.exit("plugboard serve did not start")
            time.sleep(0.1)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def request(method, path, body=None, headers=None):
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response, response.read()

    ids = [f"com.scale.p{n:06d}" for n in range(args.plugins)]
    for h in range(args.hosts):
        entries = []
        for k in range(args.per_host):
            pid = ids[(h * 37 + k * 101) % len(ids)]
            loaded = k % 4 != 0
            entries.append({"pluginID": pid, "version": "1.0.0", "state": "loaded" if loaded else "skipped",
                            "reasonCode": None if loaded else "disabled",
                            "reason": None if loaded else f"{pid} is disabled in production"})
        body = json.dumps({"hostId": f"host-{h:03d}", "hostVersion": "2.4.0", "entries": entries})
        response, text = request("POST", "/api/host/report", body,
                                 {"Authorization": hosts_token, "Content-Type": "application/json"})
        if response.status >= 300:
            sys.exit(f"report {h}: {response.status} {text[:200]!r}")

    # The sign-in form carries a CSRF token made for the pre-session its page sets as a cookie, and comes from the
    # console's origin.
    response, page = request("GET", "/ui/sign-in")
    form_cookie = response.getheader("Set-Cookie").split(";")[0]
    csrf = page.decode().split('name="csrf" value="', 1)[1].split('"', 1)[0]
    response, _ = request("POST", "/ui/sign-in", urllib.parse.urlencode({"token": access, "csrf": csrf}),
                          {"Content-Type": "application/x-www-form-urlencoded", "Cookie": form_cookie,
                           "Origin": f"http://127.0.0.1:{port}"})
    cookie = response.getheader("Set-Cookie").split(";")[0]
    # The server writes hosts' reports in batches (every 5 s): wait until the fleet page lists every host.
    deadline = time.monotonic() + 60
    while True:
        _, page = request("GET", "/ui/fleet", headers={"Cookie": cookie})
        if f"{args.hosts} hosts".encode() in page or time.monotonic() > deadline:
            break
        time.sleep(0.5)

    one = ids[123]
    pages = ["/ui/", "/ui/plugins?env=default", "/ui/plugins?env=default&q=p0099", f"/ui/plugins/{one}?env=default",
             "/ui/fleet", f"/ui/fleet?plugin={ids[0]}", "/ui/flags?env=default", "/ui/audit", f"/ui/audit?target={one}",
             "/ui/tokens", "/ui/rollouts?env=default"]
    print(f"{'page':45} {'median ms':>10} {'p95 ms':>8} {'KB':>6}")
    slowest = (0, "")
    for page in pages:
        times = []
        size = 0
        for n in range(args.runs + 2):
            started = time.perf_counter()
            response, body = request("GET", page, headers={"Cookie": cookie})
            elapsed = (time.perf_counter() - started) * 1000
            if response.status != 200:
                sys.exit(f"{page}: {response.status} {body[:300]!r}")
            size = len(body)
            if n >= 2:
                times.append(elapsed)
        times.sort()
        median = statistics.median(times)
        p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
        slowest = max(slowest, (median, page))
        print(f"{page:45} {median:10.1f} {p95:8.1f} {size / 1024:6.0f}")
    print(f"console pages: {args.plugins} plug-ins, {args.hosts} hosts, {args.rows} audit rows: "
          f"slowest median {slowest[0]:.1f} ms ({slowest[1]})")
finally:
    if server:
        server.terminate()
        server.wait(timeout=30)
    shutil.rmtree(scratch, ignore_errors=True)
