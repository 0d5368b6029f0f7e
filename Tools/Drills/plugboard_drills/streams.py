"""Lightweight host streams for the fleet drill (`drill fleet --streams N`).

Each client opens `GET /api/host/stream?push=snapshot` with a hosts' token, as a remote host does, reads its
server-sent events, and verifies every snapshot a `changed` event carries as a host verifies one: an Ed25519
signature of the statement by the board key it was given, the statement's environment, its content's SHA-256, and an
audit row not older than the newest it accepted (a replayed or older snapshot is refused and counted). It then notes
when it first held a verified snapshot in which a plug-in is killed.

The clients run in a few worker processes (asyncio, one connection per client), so that 1,000 of them cost a few
processes rather than 1,000. Needs the `cryptography` package (Ed25519).
"""

import asyncio
import base64
import hashlib
import json
import multiprocessing
import os
import time


def key_id(raw):
    """The board key's id, as the board computes it: the first 16 hex digits of the SHA-256 of the raw key."""
    return hashlib.sha256(raw).hexdigest()[:16]


class Verifier:
    """What one client trusts and has accepted: the board key, its environment, its anchor (audit row)."""

    def __init__(self, key_base64, environment):
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
        raw = base64.b64decode(key_base64)
        self.key = Ed25519PublicKey.from_public_bytes(raw)
        self.key_id = key_id(raw)
        self.environment = environment
        self.anchor = -1
        self.refused = 0

    def verify(self, envelope):
        """The snapshot's content (a HostView as JSON) once the envelope verifies; None (and counted) otherwise."""
        from cryptography.exceptions import InvalidSignature
        try:
            statement = envelope["statement"]
            lines = statement.split("\n")
            fields = dict(line.split("=", 1) for line in lines[1:9])
            if lines[0] != "plugboard-snapshot-v1" or len(lines) != 10 or fields["environment"] != self.environment:
                raise ValueError("not a statement of this environment")
            signature = next(base64.b64decode(s["signature"]) for s in envelope["signatures"] if s["keyID"] == self.key_id)
            self.key.verify(signature, statement.encode())
            content = base64.b64decode(envelope["content"])
            if hashlib.sha256(content).hexdigest() != fields["content-sha256"]:
                raise ValueError("content is not the one signed")
            seq = int(fields["seq"])
            if seq < self.anchor:
                raise ValueError("older than the anchor")
            self.anchor = seq
            return json.loads(content)
        except (KeyError, ValueError, StopIteration, InvalidSignature, TypeError):
            self.refused += 1
            return None


async def body_parts(reader, chunked):
    """The bytes of a response body as they come, with the chunked transfer encoding undone."""
    if not chunked:
        while part := await reader.read(65536):
            yield part
        return
    while True:
        size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
        if size == 0:
            return
        yield await reader.readexactly(size)
        await reader.readline()


async def client(index, host, port, path, token, verifier, plugin, results, connected):
    """One stream: reads events until the loop ends; notes when it first verified a snapshot with `plugin` killed."""
    try:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: {token}\r\n"
                      f"Accept: text/event-stream\r\nUser-Agent: plugboard-drill-stream\r\n\r\n").encode())
        await writer.drain()
        status = await reader.readline()
        if b" 200 " not in status:
            results["failed"] += 1
            return
        chunked = False
        while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
            chunked = chunked or header.lower().replace(b" ", b"").startswith(b"transfer-encoding:chunked")
        connected.append(index)
        name, data, pending = None, [], b""
        async for body in body_parts(reader, chunked):
            pending += body
            *lines, pending = pending.split(b"\n")
            for line in lines:
                text = line.rstrip(b"\r")
                if not text:
                    if name == "changed" and data:
                        envelope = json.loads(b"".join(data)).get("snapshot")
                        if envelope is not None:
                            view = verifier.verify(envelope)
                            entry = view and view["registry"]["plugins"].get(plugin)
                            if entry and entry.get("killed") and index not in results["killed"]:
                                results["killed"][index] = time.time()
                        else:
                            results["notices"] += 1
                    name, data = None, []
                elif text.startswith(b"event:"):
                    name = text[6:].strip().decode()
                elif text.startswith(b"data:"):
                    data.append(text[5:].lstrip())
    except (OSError, asyncio.IncompleteReadError, ValueError):
        results["failed"] += 1


def worker(first, count, address, path, token, key, environment, plugin, pipe):
    """A process of `count` clients: says how many connected, then on `stop` sends its results."""
    host, port = address.rsplit(":", 1)
    results = {"killed": {}, "failed": 0, "notices": 0}
    connected = []

    async def run():
        verifiers = [Verifier(key, environment) for _ in range(count)]
        tasks = [asyncio.create_task(client(first + i, host, int(port), path, token, verifiers[i], plugin, results, connected))
                 for i in range(count)]
        loop = asyncio.get_running_loop()
        while True:
            command = await loop.run_in_executor(None, pipe.recv)
            if command == "connected":
                pipe.send(len(connected))
            elif command == "killed":
                pipe.send(len(results["killed"]))
            elif command == "stop":
                for task in tasks:
                    task.cancel()
                results["refused"] = sum(v.refused for v in verifiers)
                pipe.send(results)
                return

    asyncio.run(run())


class Streams:
    """N lightweight host streams in `processes` workers against `address` (host:port)."""

    def __init__(self, count, address, token, key, environment="default", plugin="", processes=None, path="/api/host/stream?push=snapshot"):
        self.count = count
        processes = processes or min(4, max(1, count // 250))
        self.pipes, self.processes = [], []
        share = [count // processes + (1 if i < count % processes else 0) for i in range(processes)]
        first = 0
        context = multiprocessing.get_context("fork")
        for part in share:
            ours, theirs = context.Pipe()
            process = context.Process(target=worker, args=(first, part, address, path, token, key, environment, plugin, theirs),
                                      daemon=True)
            process.start()
            self.pipes.append(ours)
            self.processes.append(process)
            first += part

    def connected(self):
        for pipe in self.pipes:
            pipe.send("connected")
        return sum(pipe.recv() for pipe in self.pipes)

    def killed(self):
        """How many clients verified the kill so far."""
        for pipe in self.pipes:
            pipe.send("killed")
        return sum(pipe.recv() for pipe in self.pipes)

    def wait_connected(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.connected() >= self.count:
                return True
            time.sleep(0.2)
        return False

    def stop(self):
        """Every worker's results merged: {"killed": {index: time}, "failed": n, "notices": n, "refused": n}."""
        merged = {"killed": {}, "failed": 0, "notices": 0, "refused": 0}
        for pipe in self.pipes:
            pipe.send("stop")
        for pipe, process in zip(self.pipes, self.processes):
            results = pipe.recv()
            merged["killed"].update(results["killed"])
            for name in ("failed", "notices", "refused"):
                merged[name] += results[name]
            process.join(10)
        return merged


def free_port():
    """A free loopback port (bound and released)."""
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_streams(url, token):
    """The server's open host streams and relay channels, from its /metrics."""
    import urllib.request
    request = urllib.request.Request(f"{url}/metrics", headers={"Authorization": token})
    values = {}
    for line in urllib.request.urlopen(request, timeout=10).read().decode().splitlines():
        if line.startswith("plugboard_") and " " in line:
            name, value = line.rsplit(" ", 1)
            values[name] = value
    return values.get("plugboard_streams_connected", "?"), values.get("plugboard_relay_channels", "?")


class Relay:
    """nginx with the repository's configuration in front of the server at `upstream` (host:port), in `folder`:
    Examples/nginx/plugboard.conf, or with `nchan` the Nchan relay of Examples/nginx/plugboard-relay.conf (on `port`,
    where the server publishes). `address` is where clients connect. Stopped with `stop()`."""

    def __init__(self, repository, upstream, folder, nginx="/usr/sbin/nginx", connections=4096, nchan=False, port=None):
        import subprocess
        import urllib.request
        port = port or free_port()
        name = "plugboard-relay.conf" if nchan else "plugboard.conf"
        with open(os.path.join(repository, "Examples/nginx", name)) as handle:
            text = handle.read()
        for old, new in (("server 127.0.0.1:4242;", f"server {upstream};"), ("listen 8080;", f"listen 127.0.0.1:{port};"),
                         ("/var/cache/nginx/plugboard", os.path.join(folder, "cache"))):
            text = text.replace(old, new)
        os.makedirs(folder, exist_ok=True)
        configuration = os.path.join(folder, "nginx.conf")
        with open(configuration, "w") as handle:
            module = "load_module /usr/lib/nginx/modules/ngx_nchan_module.so;\n" if nchan else ""
            handle.write(f"{module}daemon off;\nmaster_process off;\nworker_processes 1;\nworker_rlimit_nofile {2 * connections + 64};\n"
                         f"pid {folder}/nginx.pid;\nerror_log {folder}/error.log warn;\n"
                         f"events {{ worker_connections {connections}; }}\n"
                         f"http {{\naccess_log off;\nclient_body_temp_path {folder}/body;\nproxy_temp_path {folder}/proxy;\n{text}\n}}\n")
        self.process = subprocess.Popen([nginx, "-c", configuration, "-p", folder], stdin=subprocess.DEVNULL)
        self.address = f"127.0.0.1:{port}"
        deadline = time.time() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://{self.address}/health", timeout=2).read()
                break
            except OSError:
                if time.time() > deadline or self.process.poll() is not None:
                    raise RuntimeError(f"nginx did not start: {open(os.path.join(folder, 'error.log')).read()[-300:]}")
                time.sleep(0.05)

    @property
    def pid(self):
        return self.process.pid

    def stop(self):
        self.process.kill()  # nginx without a master process does not stop on SIGTERM
        self.process.wait()
