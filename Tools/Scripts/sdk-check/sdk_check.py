#!/usr/bin/env python3
"""Real SDKs against `plugboard serve`.

Starts `plugboard serve` on a free loopback port with a board holding the differential fixture's flags, then asks
the official Unleash Python SDK (polling mode and streaming mode) and OpenFeature's Python SDK with its OFREP
provider for thousands of generated contexts, and compares every answer with `plugboard flag evaluate` on the same
board. While the SDKs run, a flag is changed with the CLI (another process) and must reach them: the streaming
client within a second, the polling one within its interval. Prints 'sdk-check: N passed, N failed'.

Usage: Tools/Scripts/sdk-check/sdk_check.py [--plugboard .build/debug/plugboard] [--contexts 2000] [--seed 7]
Needs: pip install UnleashClient openfeature-sdk openfeature-provider-ofrep
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import logging

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FEATURES = os.path.join(ROOT, "Tests/PlugboardFlagsTests/Fixtures/differential/features.json")
# Flags whose answer depends on a random draw: no two evaluators agree on them.
RANDOM_FLAGS = {"rollout.random", "gradual.random"}
LIVE_FLAG = "sdk.check.live"

try:
    from UnleashClient import UnleashClient
    from openfeature import api as openfeature_api
    from openfeature.evaluation_context import EvaluationContext
    from openfeature.contrib.provider.ofrep import OFREPProvider
except ImportError as error:  # pragma: no cover
    print(f"sdk-check: the Python SDKs are not installed ({error}); "
          "run: python3 -m pip install UnleashClient openfeature-sdk openfeature-provider-ofrep", file=sys.stderr)
    sys.exit(77)


class Check:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.examples = []

    def expect(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            if len(self.examples) < 15:
                self.examples.append(what)


def plugboard(binary, board, *arguments, stdin=None):
    result = subprocess.run([binary, *arguments, "--db", board], input=stdin, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"sdk-check: plugboard {' '.join(arguments)} failed: {result.stderr.strip()}")
    return result.stdout


def contexts(count, seed, toggles):
    rng = random.Random(seed)
    result = []
    for _ in range(count):
        context = {"appName": "sdk-check", "environment": "default",
                   "currentTime": f"20{rng.randint(20, 29)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T1{rng.randint(0, 9)}:00:00.000Z"}
        # A user id always: several flags stick to userId, and a missing stickiness field is random.
        context["userId"] = rng.choice([f"user-{rng.randint(0, 99999)}", "u1", "alice", "USER-42"])
        # A session id always: without a user id or a session id, Unleash's default stickiness is random.
        context["sessionId"] = f"s-{rng.randint(0, 9999)}"
        if rng.random() < 0.6:
            context["remoteAddress"] = rng.choice(["10.1.2.3", "192.168.1.1", "203.0.113.9", f"172.{rng.randint(14, 33)}.1.1"])
        properties = {}
        for name, values in {
            "tenant": ["acme", "globex", "initech", "umbrella"], "country": ["NO", "SE", "DE", "US", "no"],
            "age": ["17", "18", "21", "65", "x"], "email": ["a@example.com", "b@corp.example", "c@test"],
            "version": ["1.0.0", "2.3.4", "2.3.4-beta.1", "10.0.0"], "score": ["0.5", "7", "99.9"],
            "clientIp": ["10.0.0.1", "2001:db8::1", "8.8.8.8"], "launchAt": ["2024-01-01T00:00:00Z", "2027-06-01T00:00:00Z"],
        }.items():
            # The tenant always: it is the stickiness of a variant, and a missing stickiness field is random.
            if name == "tenant" or rng.random() < 0.5:
                properties[name] = rng.choice(values)
        context["properties"] = properties
        result.append({"toggle": rng.choice(toggles), "context": context})
    return result


def variant_matches(actual, expected):
    if bool(actual.get("enabled")) != bool(expected.get("enabled")) or actual.get("name") != expected.get("name"):
        return False
    if bool(actual.get("feature_enabled", expected.get("feature_enabled"))) != bool(expected.get("feature_enabled")):
        return False
    return (actual.get("payload") or None) == (expected.get("payload") or None)


def wait_until(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def unleash_client(base, token, streaming):
    options = dict(url=f"{base}/api", app_name="sdk-check", instance_id=f"sdk-check-{'streaming' if streaming else 'polling'}",
                   custom_headers={"Authorization": token}, refresh_interval=1, metrics_interval=1)
    if streaming:
        options["experimental_mode"] = {"type": "streaming"}
    client = UnleashClient(**options)
    client.initialize_client()
    if not wait_until(lambda: client.is_initialized and client.is_enabled(LIVE_FLAG), 20):
        raise SystemExit(f"sdk-check: the {'streaming' if streaming else 'polling'} Unleash client never saw the board's flags")
    return client


def check_unleash(check, client, cases, expected, label):
    for case, answer in zip(cases, expected):
        toggle, context = case["toggle"], case["context"]
        enabled = client.is_enabled(toggle, context)
        check.expect(enabled == answer["enabled"], f"{label}: {toggle} enabled {enabled} != {answer['enabled']} for {json.dumps(context)}")
        variant = client.get_variant(toggle, context)
        check.expect(variant_matches(variant, answer["variant"]),
                     f"{label}: {toggle} variant {variant} != {answer['variant']} for {json.dumps(context)}")


def ofrep_context(context):
    attributes = {k: v for k, v in context.items() if k not in ("userId", "properties")}
    attributes.update(context.get("properties", {}))
    return EvaluationContext(targeting_key=context.get("userId"), attributes=attributes)


def check_ofrep(check, client, cases, expected, variant_flags):
    for case, answer in zip(cases, expected):
        toggle, context = case["toggle"], ofrep_context(case["context"])
        if toggle not in variant_flags:
            value = client.get_boolean_value(toggle, not answer["enabled"], context)
            check.expect(value == answer["enabled"], f"ofrep: {toggle} {value} != {answer['enabled']} for {case['context']}")
            continue
        variant = answer["variant"]
        payload = variant.get("payload")
        if not variant["enabled"]:
            value = client.get_string_value(toggle, "__default__", context)
            check.expect(value == "__default__", f"ofrep: {toggle} gave {value!r}, expected the default for {case['context']}")
        elif payload is None:
            value = client.get_string_value(toggle, "__default__", context)
            check.expect(value == variant["name"], f"ofrep: {toggle} {value!r} != variant {variant['name']!r}")
        elif payload["type"] == "json":
            value = client.get_object_value(toggle, {}, context)
            check.expect(value == json.loads(payload["value"]), f"ofrep: {toggle} {value!r} != {payload['value']}")
        elif payload["type"] == "number":
            # A number payload is sent as a float (1.0 for "1"), so get_float_value reads every one of them.
            number = float(payload["value"])
            value = client.get_float_value(toggle, -1.0, context)
            check.expect(value == number, f"ofrep: {toggle} {value!r} != {payload['value']}")
        else:
            value = client.get_string_value(toggle, "__default__", context)
            check.expect(value == payload["value"], f"ofrep: {toggle} {value!r} != {payload['value']!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plugboard", default=os.path.join(ROOT, ".build/debug/plugboard"))
    parser.add_argument("--contexts", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    binary = os.path.abspath(args.plugboard)
    check = Check()

    with tempfile.TemporaryDirectory(prefix="plugboard-sdk-check-") as work:
        board = os.path.join(work, "board.sqlite")
        plugboard(binary, board, "init")
        plugboard(binary, board, "flag", "import", FEATURES, "--env", "default")
        plugboard(binary, board, "flag", "create", LIVE_FLAG)
        plugboard(binary, board, "flag", "enable", LIVE_FLAG)
        token = json.loads(plugboard(binary, board, "token", "create", "--env", "default", "--name", "sdk-check", "--for", "sdk", "--json"))["token"]
        features = json.loads(plugboard(binary, board, "flag", "export"))
        toggles = sorted(f["name"] for f in features["features"] if f["name"] not in RANDOM_FLAGS and f["name"] != LIVE_FLAG)
        variant_flags = {f["name"] for f in features["features"]
                         if f.get("variants") or any(s.get("variants") for s in f.get("strategies") or [])}

        cases = contexts(args.contexts, args.seed, toggles)
        lines = "".join(json.dumps(case) + "\n" for case in cases)
        expected = [json.loads(line) for line in plugboard(binary, board, "flag", "evaluate", "--contexts", "-", stdin=lines).splitlines()]

        server = subprocess.Popen([binary, "serve", "--db", board, "--listen", "127.0.0.1:0", "--log-level", "warning"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = server.stdout.readline()
            if not line.startswith("Serving the board at "):
                raise SystemExit(f"sdk-check: plugboard serve did not start: {line}{server.stderr.read()}")
            base = line.split()[4].rstrip(":")
            print(f"sdk-check: serving at {base}; {len(cases)} contexts over {len(toggles)} flags")

            polling = unleash_client(base, token, streaming=False)
            streaming = unleash_client(base, token, streaming=True)
            check_unleash(check, polling, cases, expected, "unleash polling")
            check_unleash(check, streaming, cases, expected, "unleash streaming")

            openfeature_api.set_provider(OFREPProvider(base_url=base, headers_factory=lambda: {"Authorization": f"Bearer {token}"}))
            check_ofrep(check, openfeature_api.get_client(), cases, expected, variant_flags)

            # A change made by the CLI while the SDKs run reaches them.
            plugboard(binary, board, "flag", "disable", LIVE_FLAG)
            changed = time.monotonic()
            seen_streaming = wait_until(lambda: not streaming.is_enabled(LIVE_FLAG), 5)
            streaming_delay = time.monotonic() - changed
            check.expect(seen_streaming and streaming_delay < 1.0,
                         f"streaming: the CLI change took {streaming_delay:.3f}s to arrive (limit 1 s)")
            seen_polling = wait_until(lambda: not polling.is_enabled(LIVE_FLAG), 5)
            check.expect(seen_polling, "polling: the CLI change did not arrive within 5 s")
            print(f"sdk-check: CLI change seen by the streaming SDK {streaming_delay * 1000:.0f} ms after the CLI returned, "
                  f"by the polling SDK {(time.monotonic() - changed) * 1000:.0f} ms after")

            # What the SDKs reported reaches the board (registrations and metrics, written in batches).
            polling.destroy()
            streaming.destroy()
            reported = wait_until(lambda: "sdk-check" in plugboard(binary, board, "clients", "--json"), 15)
            check.expect(reported, "the SDKs' registrations did not reach plugboard clients")
        finally:
            server.terminate()
            try:
                status = server.wait(timeout=15)
                check.expect(status == 0, f"plugboard serve exited with {status} on SIGTERM")
            except subprocess.TimeoutExpired:
                server.kill()
                check.expect(False, "plugboard serve did not stop within 15 s of SIGTERM")

    for example in check.examples:
        print(f"  mismatch: {example}")
    print(f"sdk-check: {check.passed} passed, {check.failed} failed")
    return 0 if check.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
