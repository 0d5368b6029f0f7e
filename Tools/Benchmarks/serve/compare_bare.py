#!/usr/bin/env python3
"""`plugboard serve` against a bare Hummingbird route (`serve-bare`) serving the same bytes, in the same run.

For each path (the 304 of a matching If-None-Match, and the full answer), runs wrk against the two servers in turn,
--rounds times, alternating which goes first, and prints each run's requests/s and latency p50/p99, then the median of
the per-round ratios serve/bare (of the time per request, 1/requests-per-second, and of p99). Needs wrk (Debian).

Usage: compare_bare.py --serve URL --bare URL --token TOKEN --etag ETAG [--rounds 5] [--seconds 5] [--connections 64]
"""
import argparse, os, re, statistics, subprocess

p = argparse.ArgumentParser()
p.add_argument("--serve", required=True)
p.add_argument("--bare", required=True)
p.add_argument("--token", required=True)
p.add_argument("--etag", required=True)
p.add_argument("--rounds", type=int, default=5)
p.add_argument("--seconds", type=int, default=5)
p.add_argument("--connections", type=int, default=64)
args = p.parse_args()
script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "features.lua")


def unit(value, suffix):
    return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[suffix]


def wrk(base, etag):
    env = dict(os.environ, PLUGBOARD_TOKEN=args.token, PLUGBOARD_ETAG=etag)
    out = subprocess.run(
        ["wrk", "-t2", f"-c{args.connections}", f"-d{args.seconds}s", "--latency", "-s", script, base + "/api/client/features"],
        env=env, capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    latency = {m.group(1): unit(m.group(2), m.group(3)) for m in re.finditer(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)}
    if "Non-2xx or 3xx" in out:
        raise SystemExit(f"wrk saw errors from {base}:\n{out}")
    return rps, latency["50"], latency["99"]


for label, etag in [("304 (If-None-Match matches)", args.etag), ("full answer (200)", "")]:
    time_ratios, p99_ratios = [], []
    print(f"== {label}, {args.connections} connections, {args.seconds} s per run")
    for round in range(args.rounds):
        order = [("serve", args.serve), ("bare", args.bare)]
        if round % 2:
            order.reverse()
        results = {}
        for name, base in order:
            results[name] = wrk(base, etag)
        (s_rps, s50, s99), (b_rps, b50, b99) = results["serve"], results["bare"]
        time_ratios.append(b_rps / s_rps)
        p99_ratios.append(s99 / b99)
        print(
            f"round {round + 1}: serve {s_rps:,.0f} req/s p50 {s50:.2f} ms p99 {s99:.2f} ms | bare {b_rps:,.0f} req/s "
            f"p50 {b50:.2f} ms p99 {b99:.2f} ms | time per request serve/bare {b_rps / s_rps:.2f}, p99 {s99 / b99:.2f}", flush=True)
    print(
        f"serve/bare, {label}: time per request {statistics.median(time_ratios):.2f}x "
        f"(rounds {min(time_ratios):.2f}-{max(time_ratios):.2f}), p99 {statistics.median(p99_ratios):.2f}x", flush=True)
