"""An HTTP proxy that sits between plug-in hosts and `plugboard serve` and attacks what passes, for the tests and the
stress suite: whatever it does, a host must not load what the board killed, did not sign, or did not register.

Usage: Tools/Drills/drill snapshot-proxy --upstream http://127.0.0.1:PORT --mode-file FILE [--port 0]

Prints `listening on PORT` once it accepts connections. The mode is read from FILE at every request (so a test can
change it while hosts run), one word:

  pass            forward everything unchanged (and remember the snapshots that pass, with their freshness proofs)
  remove-kill     snapshots: every kill switch removed from the registry the snapshot carries
  flip-signature  snapshots: every release's signature check set to valid, and its evidence dropped
  swap-artifact   snapshots: every artifact digest replaced by the digest of other bytes; artifacts: other bytes
  replay          snapshots: the first snapshot that passed in `pass` mode, with the freshness proof that came with
                  it (the server's answer to another host's nonce), whatever was asked
  replay-proof    snapshots: the first snapshot that passed in `pass` mode, with the freshness proof the server gives
                  now for this request's nonce (a proof of the current head, not of the replayed one)
  strip-proof     snapshots: forwarded, without their freshness proof
  freeze          event streams get nothing more (the connection stays open); snapshots: the last one that passed

and, for the snapshots the host stream pushes on its `changed` events (`?push=snapshot`):

  push-forge      each pushed snapshot has its kill switches removed (the signature left as it was); each is said
                  on standard output (`forged the snapshot pushed with revision N`)
  push-replay     each pushed snapshot is replaced by the first one that passed in `pass` mode
  push-drop       each `changed` event that carries a snapshot is dropped
  push-reorder    the `changed` events that carry a snapshot are delivered in pairs, the later one first

Loopback only; it stops when its standard input closes.
"""
import argparse
import base64
import hashlib
import http.client
import http.server
import json
import os
import sys
import threading
import urllib.parse

EVIL = b"\x7fELF not the library that was registered\n"
PROOF = "Plugboard-Freshness"


class State:
    lock = threading.Lock()
    first_snapshot = None
    last_snapshot = None
    first_pushed = None


def mode(path):
    try:
        with open(path) as f:
            return f.read().strip() or "pass"
    except OSError:
        return "pass"


def tamper(body, how):
    """The snapshot envelope with its content changed and the signature left as it was."""
    envelope = json.loads(body)
    content = json.loads(base64.b64decode(envelope["content"]))
    registry = content["registry"]
    if how == "remove-kill":
        registry["allKilled"] = False
        registry.pop("allKilledReason", None)
        for plugin in registry["plugins"].values():
            plugin["killed"] = False
            plugin.pop("killReason", None)
            for version in plugin["versions"]:
                version["killed"] = False
    elif how == "flip-signature":
        for check in content["checks"].values():
            check.pop("stateProblem", None)
            check["signature"] = {"state": "valid", "keyIDs": ["0000000000000000"], "message": "valid (proxy)"}
        content.pop("evidence", None)
    elif how == "swap-artifact":
        digest = hashlib.sha256(EVIL).hexdigest()
        for plugin in registry["plugins"].values():
            for version in plugin["versions"]:
                if version.get("artifactSHA256"):
                    version["artifactSHA256"] = digest
    envelope["content"] = base64.b64encode(json.dumps(content, sort_keys=True).encode()).decode()
    return json.dumps(envelope).encode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--mode-file", required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    upstream = urllib.parse.urlparse(args.upstream)
    assert upstream.hostname in ("127.0.0.1", "localhost", "::1"), "loopback only"

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def forward(self, method):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection", "if-none-match")}
            now = mode(args.mode_file)
            path = self.path.split("?")[0]
            if path == "/api/host/snapshot" and now in ("replay", "freeze"):
                with State.lock:
                    kept = State.first_snapshot if now == "replay" else State.last_snapshot
                if kept is not None:
                    return self.reply(200, kept[0], "application/json", kept[1])
            connection = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=120)
            connection.request(method, self.path, body=body, headers=headers)
            response = connection.getresponse()
            if response.getheader("Content-Type", "").startswith("text/event-stream"):
                return self.stream(response)
            data = response.read()
            connection.close()
            proof = response.getheader(PROOF)
            if path == "/api/host/snapshot" and response.status == 200:
                if now == "pass":
                    with State.lock:
                        State.first_snapshot = State.first_snapshot or (data, proof)
                        State.last_snapshot = (data, proof)
                elif now in ("remove-kill", "flip-signature", "swap-artifact"):
                    data = tamper(data, now)
                elif now == "replay-proof":
                    with State.lock:
                        data = (State.first_snapshot or (data, None))[0]
                elif now == "strip-proof":
                    proof = None
            if path.startswith("/api/host/artifacts/") and now == "swap-artifact" and response.status == 200:
                data = EVIL
            self.reply(response.status, data, response.getheader("Content-Type", "application/octet-stream"), proof)

        def reply(self, status, data, content_type, proof=None):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            if proof:
                self.send_header(PROOF, proof)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def stream(self, response):
            self.send_response(response.status)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            block, held = [], None
            try:
                while True:
                    line = response.readline()
                    if not line:
                        return
                    block.append(line)
                    if line.strip():
                        continue
                    # One whole event (or comment), written as the mode says.
                    event, block = b"".join(block), []
                    now = mode(args.mode_file)
                    if now == "freeze":
                        continue
                    pushed = event.startswith(b"event: changed") and b'"snapshot":' in event
                    if pushed:
                        head, _, data = event.partition(b"data: ")
                        payload = json.loads(data)
                        if now == "pass":
                            with State.lock:
                                State.first_pushed = State.first_pushed or payload["snapshot"]
                        elif now == "push-forge":
                            payload["snapshot"] = json.loads(tamper(json.dumps(payload["snapshot"]), "remove-kill"))
                            print(f"forged the snapshot pushed with revision {payload.get('revision')}", flush=True)
                        elif now == "push-replay":
                            with State.lock:
                                payload["snapshot"] = State.first_pushed or payload["snapshot"]
                        elif now == "push-drop":
                            continue
                        elif now == "push-reorder":
                            if held is None:
                                held = event
                                continue
                            event, held = event + held, None
                            self.wfile.write(event)
                            self.wfile.flush()
                            continue
                        event = head + b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"
                    self.wfile.write(event)
                    self.wfile.flush()
            except OSError:
                return

        def do_GET(self):
            self.forward("GET")

        def do_POST(self):
            self.forward("POST")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"listening on {server.server_address[1]}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
