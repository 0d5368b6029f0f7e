#!/usr/bin/env python3
"""Evaluate Unleash flags with Unleash's own engine (Yggdrasil), in Plugboard's batch JSONL format.

Usage:
    yggdrasil_eval.py --features FEATURES.json --contexts CONTEXTS.jsonl [--output OUT.jsonl]

Each input line is {"toggle": "NAME", "context": {...}}; each output line is, with this exact key order,
{"toggle":"NAME","enabled":true,"variant":{"name":"...","enabled":true,"feature_enabled":true,"payload":{"type":"...","value":"..."}}}
("payload" left out when the variant has none), the same bytes PlugboardFlags' BatchEvaluator writes.
Blank input lines produce no output. Needs `pip install yggdrasil-engine`.
Exit status: 0 on success, 2 on bad input, 3 when the engine is not installed.
"""

import argparse
import json
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", required=True, help="Unleash client-API features JSON")
    parser.add_argument("--contexts", required=True, help="JSONL requests, or - for standard input")
    parser.add_argument("--output", help="write here instead of standard output")
    args = parser.parse_args()

    try:
        from yggdrasil_engine.engine import UnleashEngine
    except ImportError as error:
        print(f"yggdrasil_eval: cannot import yggdrasil_engine ({error}); run: pip install yggdrasil-engine", file=sys.stderr)
        return 3

    with open(args.features, encoding="utf-8") as handle:
        state = handle.read()
    engine = UnleashEngine()
    warnings = engine.take_state(state)
    if warnings:
        print(f"yggdrasil_eval: engine warnings:\n{warnings}", file=sys.stderr)

    source = sys.stdin if args.contexts == "-" else open(args.contexts, encoding="utf-8")
    sink = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        for number, line in enumerate(source, start=1):
            if not line.strip():
                continue
            try:
                request = json.loads(line)
                toggle = request["toggle"]
                context = request.get("context") or {}
                if not isinstance(toggle, str) or not isinstance(context, dict):
                    raise ValueError("'toggle' must be a string and 'context' an object")
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                print(f"yggdrasil_eval: line {number}: {error}", file=sys.stderr)
                return 2
            enabled = engine.check_enabled(toggle, context).is_enabled
            variant = engine.check_variant(toggle, context).variant
            variant_out = {"name": variant.name, "enabled": variant.enabled, "feature_enabled": variant.feature_enabled}
            if variant.payload is not None:
                variant_out["payload"] = {"type": variant.payload.get("type"), "value": variant.payload.get("value")}
            out = {"toggle": toggle, "enabled": enabled, "variant": variant_out}
            sink.write(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n")
    finally:
        if source is not sys.stdin:
            source.close()
        if sink is not sys.stdout:
            sink.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
