"""What every drill needs: the binaries, scratch boards and the CLI on them, `plugboard serve`, host processes and their
events, HTTP calls to a served board (the operations API's wire in one function), waiting on events, and reporting.
Python 3 standard library only."""

import argparse
import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# What a crashed Swift process leaves on its standard error.
CRASH_MARKERS = ("Fatal error", "fatal error:", "Swift runtime failure", "Segmentation fault", "Illegal instruction",
                 "Current stack trace", "💣 Program crashed")
BUSY_WORDS = ("database is locked", "busy")


# ---------------------------------------------------------------------------------------------------------------
# Reporting


def one_line(text, limit=400):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "…"


class Report:
    """A drill's progress lines (`NAME: …`) and its failures, each printed on a line of its own as it happens.
    Thread-safe."""

    def __init__(self, name):
        self.name = name
        self.lock = threading.Lock()
        self.failures = []

    def log(self, message):
        print(f"{self.name}: {message}", flush=True)

    def failure_line(self, message, scenario=None):
        return f"FAILED: {message}"

    def fail(self, message, scenario=None):
        line = self.failure_line(message, scenario)
        with self.lock:
            self.failures.append(line)
        print(line, flush=True)


def percentile(values, fraction):
    """The value at `fraction` (0-1) of the sorted values (nearest rank); NaN when there are none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(fraction * (len(ordered) - 1)))))]


def sized_options(description, size, default, short, largest, add=None):
    """The options of a drill of a size: `--SIZE N` (1 to `largest`, else `default`), `--short` (`short` of them, as CI
    runs it) and `--keep`; `add(parser)` adds the drill's own. The parsed options and the size to run."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(f"--{size}", type=int, default=default)
    parser.add_argument("--short", action="store_true", help=f"{short} {size} (CI)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    if add:
        add(parser)
    options = parser.parse_args()
    chosen = short if options.short else getattr(options, size)
    if not 1 <= chosen <= largest:
        parser.error(f"--{size} must be between 1 and {largest}")
    return options, chosen


# ---------------------------------------------------------------------------------------------------------------
# The binaries and scratch folders


def binaries(report, release=False):
    """`plugboard` and `plugboard-test-host`: $PLUGBOARD_BIN and $PLUGBOARD_TEST_HOST, else <repo>/.build/release/… when
    `release` and both exist, else <repo>/.build/debug/… (built with `swift build` when missing)."""
    names = ("plugboard", "plugboard-test-host")
    given = [os.environ.get("PLUGBOARD_BIN"), os.environ.get("PLUGBOARD_TEST_HOST")]
    built = [os.path.join(REPO, ".build/release", name) for name in names]
    if not (release and all(os.access(path, os.X_OK) for path in built)):
        built = [os.path.join(REPO, ".build/debug", name) for name in names]
    chosen = [path or default for path, default in zip(given, built)]
    missing = [path for path in chosen if not os.access(path, os.X_OK)]
    if missing:
        # One product per invocation: given --product twice, swift build builds only the last one.
        report.log(f"{', '.join(missing)} missing: running swift build --product plugboard, then --product "
                   "plugboard-test-host, in the repository")
        for product in names:
            subprocess.run(["swift", "build", "--product", product], cwd=REPO, check=True)
    return chosen[0], chosen[1]


@contextlib.contextmanager
def scratch(report, prefix, keep):
    """A temporary folder, removed at the end unless `keep` (then its path is printed)."""
    root = tempfile.mkdtemp(prefix=prefix)
    try:
        yield root
    finally:
        if keep:
            report.log(f"scratch folder kept at {root}")
        else:
            for folder, _, _ in os.walk(root):
                os.chmod(folder, 0o755)
            shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------------------
# Running processes


class DrillError(Exception):
    """A step that could not be done: the drill reports it as a failure."""


class Result:
    """A finished process: exit status (negative: killed by that signal), output and error bytes, and whether it
    was stopped at its time limit."""

    def __init__(self, args, code, out, err, timed_out, seconds):
        self.args, self.code, self.out, self.err, self.timed_out, self.seconds = args, code, out, err, timed_out, seconds

    @property
    def text(self):
        return self.out.decode("utf-8", "replace")

    @property
    def error(self):
        return self.err.decode("utf-8", "replace")

    def crashed(self):
        """An exit by a signal we did not send, or a Swift runtime error on stderr."""
        return (self.code is not None and self.code < 0 and not self.timed_out) or any(
            marker in self.error for marker in CRASH_MARKERS)

    def busy(self):
        if self.code == 127:
            return False
        lowered = self.error.lower()
        return any(word in lowered for word in BUSY_WORDS)

    def describe(self):
        shown = " ".join(a if len(a) < 80 else a[:77] + "…" for a in self.args[1:])
        return f"`plugboard {shown}` exit {self.code}: {one_line(self.error or self.text, 300)}"


def run(args, stdin=None, timeout=30.0, env=None, preexec_fn=None, cwd=None):
    """Runs one process with a time limit; its exit status, stdout and stderr."""
    started = time.monotonic()
    try:
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env, preexec_fn=preexec_fn, cwd=cwd)
    except OSError as error:
        return Result(args, 127, b"", str(error).encode(), False, 0.0)
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        timed_out = True
    return Result(args, proc.returncode, out, err, timed_out, time.monotonic() - started)


def collect(stream, into):
    """Reads `stream` to its end on a thread of its own, appending what it read to the list `into`."""
    threading.Thread(target=lambda: into.append(stream.read()), daemon=True).start()


def stop(process, timeout=30):
    """Closes a process's stdin (a test host then stops its plug-ins and exits; the proxy exits) and waits; kills it
    after `timeout` seconds. Its exit status, or None when it had to be killed."""
    try:
        process.stdin.close()
    except (OSError, AttributeError):
        pass
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None


def cpu_ms(pid):
    """User and system CPU time of a process so far, in milliseconds (Linux /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def process_memory(pid):
    """(VmRSS, VmHWM) of a process in MiB, from /proc."""
    values = {}
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    values[line.split(":")[0]] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def eventually(check, timeout, interval=0.2):
    """Calls `check` until it returns something true or `timeout` seconds have passed; its last answer."""
    deadline = time.monotonic() + timeout
    while True:
        answer = check()
        if answer or time.monotonic() >= deadline:
            return answer
        time.sleep(interval)


# ---------------------------------------------------------------------------------------------------------------
# Boards and the CLI


class Board:
    """A board file and the `plugboard` CLI on it (`--db` and $PLUGBOARD_DB both name it); `counted` is called for
    each process started."""

    def __init__(self, path, binary, env_extra=None, preexec_fn=None, timeout=60.0, counted=None):
        self.path = path
        self.folder = os.path.dirname(path)
        os.makedirs(self.folder, exist_ok=True)
        self.binary = binary
        self.env = dict(os.environ, PLUGBOARD_DB=self.path, PLUGBOARD_ENV="default")
        self.env.pop("PLUGBOARD_MASTER_KEY", None)
        self.env.update(env_extra or {})
        self.preexec_fn = preexec_fn
        self.timeout = timeout
        self.counted = counted or (lambda: None)
        self.counter = 0

    def at(self, path):
        """The same CLI on another board file (a restored copy)."""
        return Board(path, self.binary, timeout=self.timeout, counted=self.counted)

    def init(self):
        self.ok("init")
        return self

    @property
    def artifacts(self):
        return self.path + ".artifacts"

    @property
    def key_file(self):
        return self.path + ".key"

    def cli(self, *args, stdin=None, timeout=None, preexec_fn=None):
        self.counted()
        return run([self.binary, *args, "--db", self.path], stdin=stdin, timeout=timeout or self.timeout,
                   env=self.env, preexec_fn=preexec_fn or self.preexec_fn, cwd=self.folder)

    def ok(self, *args, stdin=None):
        """The command's result; a DrillError when it did not exit 0."""
        result = self.cli(*args, stdin=stdin)
        if result.code != 0:
            raise DrillError(result.describe())
        return result

    def json(self, *args):
        """The command's `--json` answer; a DrillError when it did not exit 0."""
        return json.loads(self.ok(*args, "--json").out)

    def start(self, *args):
        """Starts a CLI process without waiting for it."""
        self.counted()
        return subprocess.Popen([self.binary, *args, "--db", self.path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=self.env, cwd=self.folder)

    def write_file(self, name, data):
        path = os.path.join(self.folder, name)
        with open(path, "wb") as handle:
            handle.write(data if isinstance(data, bytes) else data.encode())
        return path

    def manifest(self, plugin, version, **extra):
        self.counter += 1
        document = {"id": plugin, "name": extra.pop("name", plugin.split(".")[-1]), "version": version, **extra}
        return self.write_file(f"manifest-{self.counter}.json", json.dumps(document))

    def register(self, plugin, version, artifact=None, **extra):
        args = ["plugin", "register", self.manifest(plugin, version, **extra)]
        if artifact:
            args += ["--artifact", artifact]
        return self.cli(*args)

    def host_token(self, name, kind="hosts"):
        """A new API token for `kind` (hosts, sdk)."""
        return self.json("token", "create", "--name", name, "--for", kind)["token"]

    def board_key(self):
        """The board's public key, as a host of the served board is given it."""
        return self.json("board-key", "show")["keys"][0]["public_key"]


# ---------------------------------------------------------------------------------------------------------------
# plugboard serve


class Server:
    """`plugboard serve` on `board`, started by `spawn` (subprocess.Popen unless the drill keeps its processes):
    `url`, `address` and `port` once it said where it listens (None when it did not start); its standard error is
    collected."""

    def __init__(self, board, *extra, listen="127.0.0.1:0", spawn=subprocess.Popen):
        self.board = board
        board.counted()
        self.process = spawn([board.binary, "serve", "--db", board.path, "--listen", listen, "--log-level", "warning",
                              *extra], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=board.env)
        self.errors = []
        self.url = self.address = self.port = None
        if self.process is None:
            return
        collect(self.process.stderr, self.errors)
        for line in self.process.stdout:
            text = line.decode("utf-8", "replace")
            if "http://" in text:
                self.address = text.split("http://", 1)[1].split()[0].rstrip(".:")
                self.url = "http://" + self.address
                self.port = int(self.address.rsplit(":", 1)[1])
                break
        collect(self.process.stdout, [])

    @property
    def pid(self):
        return self.process.pid

    def started(self):
        """The server listens; a DrillError saying how it ended otherwise."""
        if self.port is None:
            raise DrillError(f"plugboard serve did not start: exit {self.process.poll()}: "
                             f"{one_line(b''.join(self.errors).decode('utf-8', 'replace')[-300:])}")
        return self

    def stop(self):
        """Stops it with SIGTERM; what went wrong, as (`hangs` or `crashes`, sentence) pairs."""
        problems = []
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            problems.append(("hangs", "plugboard serve did not stop within 30 s of SIGTERM"))
        time.sleep(0.1)  # the stderr reader reaches the end
        error = b"".join(self.errors).decode("utf-8", "replace")
        if any(marker in error for marker in CRASH_MARKERS):
            problems.append(("crashes", f"plugboard serve crashed: {one_line(error[-300:])}"))
        return problems


# ---------------------------------------------------------------------------------------------------------------
# Hosts and their events


def board_host(board, host_id, plugins, poll_ms=50):
    """The arguments of a host of the board file."""
    return ["--db", board.path, "--plugins", ",".join(plugins), "--host-id", host_id, "--poll-ms", str(poll_ms)]


def served_host(url, token, key, cache, host_id, plugins):
    """The arguments of a host of the served board at `url`, with a cache folder of its own."""
    return ["--server", url, "--token", token, "--board-key", key, "--cache", cache, "--host-id", host_id, "--plugins",
            ",".join(plugins)]


def event_is(kind, plugin=None, **fields):
    """A match for events of `kind` (of `plugin`, with `fields`)."""
    return lambda event: (event.get("event") == kind and (plugin is None or event.get("plugin") == plugin)
                          and all(event.get(name) == value for name, value in fields.items()))


class Events:
    """The JSON lines of one or more processes, each stamped with the wall-clock time it arrived; a line that is not
    JSON is kept as a `garbage` event."""

    def __init__(self):
        self.events = []
        self.lock = threading.Condition()

    def read(self, process):
        """Reads `process`'s stdout on a thread of its own."""
        threading.Thread(target=self._read, args=(process,), daemon=True).start()

    def _read(self, process):
        for line in process.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                event = {"event": "garbage", "line": line if isinstance(line, str) else line.decode("utf-8", "replace")}
            with self.lock:
                self.events.append((time.time(), event))
                self.lock.notify_all()

    def mark(self):
        """A time to wait for events after."""
        return time.time()

    def ended(self):
        """Whether no more events can come (the process exited)."""
        return False

    def first(self, match, after=0.0, timeout=30.0):
        """The first (time, event) at or after `after` that `match` accepts, or None after `timeout` or once no more
        events can come."""
        deadline = time.time() + timeout
        with self.lock:
            while True:
                for stamp, event in self.events:
                    if stamp >= after and match(event):
                        return stamp, event
                remaining = deadline - time.time()
                if remaining <= 0 or self.ended():
                    return None
                self.lock.wait(min(remaining, 1.0))

    def any_event(self, match, after=0.0):
        with self.lock:
            return any(stamp >= after and match(event) for stamp, event in self.events)

    def all_events(self):
        with self.lock:
            return [event for _, event in self.events]


class Host(Events):
    """One `plugboard-test-host` process with `arguments`: its events, and its standard error once it ended."""

    def __init__(self, binary, arguments, env=None, name=None):
        super().__init__()
        self.name = name
        self.spawned = time.time()
        self.process = subprocess.Popen([binary, *arguments], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=env)
        self.errors = []
        self.read(self.process)
        collect(self.process.stderr, self.errors)

    def ended(self):
        return self.process.poll() is not None

    @property
    def stderr(self):
        return b"".join(self.errors).decode("utf-8", "replace")

    def stop(self, timeout=30):
        """Closes its stdin and waits (kills it after `timeout` s); its exit status, None when it had to be killed."""
        code = stop(self.process, timeout)
        deadline = time.time() + 10
        while not self.errors and time.time() < deadline:
            time.sleep(0.05)
        return code


# ---------------------------------------------------------------------------------------------------------------
# HTTP to a served board


def request(port, method, path, body=b"", headers=None, timeout=30.0):
    """One request on a connection of its own; (status, body) or (None, error text)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read()
    except (OSError, http.client.HTTPException) as error:
        return None, str(error)
    finally:
        connection.close()


# The operations API's routes, by operation: the one place that knows its wire.
def admin(port, operation, fields=None, token=None, timeout=30.0, announce=None):
    """Calls `operation` of the operations API (/api/admin) with its `fields` and a bearer `token`: (status, body),
    or (None, error text). With `announce`, sends a body of that many bytes that the server should refuse before
    reading it, and returns (status, status line)."""
    method, path = "POST", f"/api/admin/{operation}"
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if announce is not None:
        line = rejected_body(port, path, headers, announce)
        return (int(line.split(" ")[1]) if line.startswith("HTTP/1.1 ") else None), line
    body = json.dumps(fields).encode() if fields is not None else b""
    if body:
        headers["Content-Type"] = "application/json"
    return request(port, method, path, body=body, headers=headers, timeout=timeout)


def rejected_body(port, path, headers, size):
    """Sends a body of `size` bytes that the server refuses before reading; returns the status line or the error."""
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
            + f"Content-Length: {size}\r\n\r\n").encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        sock.sendall(head)
        try:
            sock.sendall(b"A" * size)
        except OSError:
            pass  # the server closed the connection with the body unread: what we want
        answer = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            answer += chunk
        return answer.split(b"\r\n", 1)[0].decode("latin-1")
    finally:
        sock.close()
