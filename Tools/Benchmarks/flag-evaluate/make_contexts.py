#!/usr/bin/env python3
"""Writes N lines of `plugboard flag evaluate` input for the differential features file, seeded, to stdout.

    python3 Tools/Benchmarks/flag-evaluate/make_contexts.py 1000000 > /tmp/contexts-1m.jsonl

Every line names one of the 33 flags in turn and carries a context like the benchmarks' (user and session ids,
an IP address, tenant, country, age, version, email, sometimes currentTime).
"""
import json
import os
import random
import sys

FEATURES = os.path.join(os.path.dirname(__file__), "../../../Tests/PlugboardFlagsTests/Fixtures/differential/features.json")


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    flags = [feature["name"] for feature in json.load(open(FEATURES))["features"]]
    rng = random.Random(0x5EED)
    out = sys.stdout
    for n in range(count):
        properties = {
            "tenant": rng.choice(["acme", "globex", "initech", "beta", "Beta-Labs", "über-corp", f"t-{rng.randint(0, 99)}"]),
            "country": rng.choice(["norway", "sweden", "denmark", "germany", "spain", "Ærø"]),
            "age": str(rng.randint(12, 90)),
            "version": rng.choice(["1.4.2", "2.0.0", "2.1.0-beta.3", "2.3.1", "0.9.0", "3.0.0-alpha", "0.1.0-rc.2"]),
            "email": rng.choice([f"user{rng.randint(0, 9999)}@example.com", "admin@example.com", "eve@example.org"]),
        }
        context = {
            "userId": f"user-{rng.randint(0, 999999)}",
            "sessionId": f"s-{rng.randint(0, 99999)}",
            "environment": "production",
            "appName": rng.choice(["web", "ios", "android"]),
            "remoteAddress": f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            "properties": properties,
        }
        if rng.random() < 0.5:
            context["currentTime"] = f"20{rng.randint(23, 27)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T12:00:00.000Z"
        out.write(json.dumps({"toggle": flags[n % len(flags)], "context": context}, ensure_ascii=False))
        out.write("\n")


if __name__ == "__main__":
    main()
