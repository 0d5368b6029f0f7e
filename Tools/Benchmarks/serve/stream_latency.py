#!/usr/bin/env python3
"""How long a CLI change takes to reach N connected streaming clients of `plugboard serve`.

Opens N server-sent-event streams (/api/client/streaming), waits for every hydration, then changes a flag with the
CLI (another process) R times and records, for every stream and every change, the time from the CLI process's exit
(the commit happened just before it) to the arrival of the matching `unleash-updated` event. Loopback only.

Usage: stream_latency.py --plugboard BIN --board BOARD --url http://127.0.0.1:PORT --token TOKEN [--streams 100] [--rounds 20]
"""
import argparse
import socket
import subprocess
import threading
import time
from urllib.parse import urlparse


def open_stream(url, token):
    parsed = urlparse(url)
    sock = socket.create_connection((parsed.hostname, parsed.port), timeout=30)
    request = (f"GET /api/client/streaming HTTP/1.1\r\nHost: {parsed.hostname}\r\nAuthorization: {token}\r\n"
               "Accept: text/event-stream\r\n\r\n")
    sock.sendall(request.encode())
    return sock


def reader(sock, arrivals, index, hydrated):
    buffer = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except OSError:
            return
        if not chunk:
            return
        now = time.monotonic()
        buffer += chunk
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            if b"unleash-connected" in event:
                hydrated[index].set()
            elif b"unleash-updated" in event and b"bench.flag" in event:
                arrivals[index].append(now)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--plugboard", required=True)
    parser.add_argument("--board", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()

    arrivals = [[] for _ in range(args.streams)]
    hydrated = [threading.Event() for _ in range(args.streams)]
    sockets = [open_stream(args.url, args.token) for _ in range(args.streams)]
    for index, sock in enumerate(sockets):
        threading.Thread(target=reader, args=(sock, arrivals, index, hydrated), daemon=True).start()
    for event in hydrated:
        if not event.wait(30):
            raise SystemExit("a stream was not hydrated within 30 s")

    latencies = []
    from_start = []
    for round_number in range(args.rounds):
        state = "enable" if round_number % 2 == 0 else "disable"
        started = time.monotonic()
        subprocess.run([args.plugboard, "flag", state, "bench.flag", "--db", args.board], check=True, capture_output=True)
        committed = time.monotonic()
        deadline = committed + 5
        while time.monotonic() < deadline and any(len(a) <= round_number for a in arrivals):
            time.sleep(0.001)
        for stream in arrivals:
            if len(stream) > round_number:
                latencies.append(stream[round_number] - committed)
                from_start.append(stream[round_number] - started)
        time.sleep(0.2)

    def percentile(values, p):
        values = sorted(values)
        return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] * 1000

    missing = args.streams * args.rounds - len(latencies)
    print(f"streams={args.streams} rounds={args.rounds} deliveries={len(latencies)} missing={missing}")
    print("from CLI exit:  p50 %.1f ms  p99 %.1f ms  max %.1f ms" % (percentile(latencies, 50), percentile(latencies, 99), max(latencies) * 1000))
    print("from CLI start: p50 %.1f ms  p99 %.1f ms  max %.1f ms" % (percentile(from_start, 50), percentile(from_start, 99), max(from_start) * 1000))


if __name__ == "__main__":
    main()
