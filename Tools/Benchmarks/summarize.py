#!/usr/bin/env python3
"""Summarizes one or more `swift package benchmark --format markdown` outputs of PlugboardBenchmarks.

    python3 Tools/Benchmarks/summarize.py run1.md [run2.md ...]

For every benchmark: the median over the runs of p50 and p90 wall clock (per scaled iteration, i.e. per
evaluation for the flag benchmarks), the range of p50 over the runs, and the median throughput. Then the ratios
the README quotes, computed within each run (p50 against p50 of the same run) and summarized as median [min-max].
"""
import re
import statistics
import sys

UNITS = {"ns": 1e-3, "μs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6}


def parse(path):
    """{benchmark: {"wall": [p0..p100] in µs, "thr": [...] in #/s, "malloc": [...]}}"""
    results, current = {}, None
    for line in open(path, encoding="utf-8"):
        heading = re.match(r"^### (\S+)", line)
        if heading:
            current = results.setdefault(heading.group(1), {})
            continue
        if current is None or not line.startswith("| ") or line.startswith("| Metric"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        label, values = cells[0], cells[1:8]
        try:
            numbers = [float(v) for v in values]
        except ValueError:
            continue
        if label.startswith("Time (wall clock)"):
            unit = re.search(r"\((ns|μs|us|ms|s)\)", label).group(1)
            current["wall"] = [n * UNITS[unit] for n in numbers]
        elif label.startswith("Throughput"):
            scale = {"(#)": 1, "(K)": 1e3, "(M)": 1e6}.get(label.split()[-1], 1)
            current["thr"] = [n * scale for n in numbers]
        elif label.startswith("Malloc (total)"):
            scale = 1e3 if "(K)" in label else 1
            current["malloc"] = [n * scale for n in numbers]
    return results


def fmt_us(value):
    if value < 1:
        return f"{value * 1000:.0f} ns"
    if value < 1000:
        return f"{value:.1f} µs" if value < 100 else f"{value:.0f} µs"
    return f"{value / 1000:.1f} ms" if value < 100_000 else f"{value / 1000:.0f} ms"


def fmt_count(value):
    if value >= 1e6:
        return f"{value / 1e6:.2f} M/s"
    if value >= 1e3:
        return f"{value / 1e3:.0f} K/s"
    return f"{value:.0f}/s"


def main(paths):
    runs = [parse(path) for path in paths]
    names = sorted(set().union(*runs))
    print(f"{len(runs)} run(s): {', '.join(paths)}\n")
    print("| benchmark | p50 wall | p90 wall | p50 range over runs | throughput (p50) | mallocs (p50) |")
    print("|:--|--:|--:|--:|--:|--:|")
    for name in names:
        present = [run[name] for run in runs if name in run and "wall" in run[name]]
        if not present:
            continue
        p50s = [r["wall"][2] for r in present]
        p90s = [r["wall"][4] for r in present]
        thr = [r["thr"][2] for r in present if "thr" in r]
        mallocs = [r["malloc"][2] for r in present if "malloc" in r]
        print(f"| {name} | {fmt_us(statistics.median(p50s))} | {fmt_us(statistics.median(p90s))} | "
              f"{fmt_us(min(p50s))} – {fmt_us(max(p50s))} | {fmt_count(statistics.median(thr)) if thr else ''} | "
              f"{statistics.median(mallocs):.0f} |" if mallocs else
              f"| {name} | {fmt_us(statistics.median(p50s))} | {fmt_us(statistics.median(p90s))} | "
              f"{fmt_us(min(p50s))} – {fmt_us(max(p50s))} | {fmt_count(statistics.median(thr)) if thr else ''} | |")

    ratios = [
        ("snapshot-from-board / isEnabled", "flags.snapshot-from-board", "flags.isEnabled"),
        ("snapshot-from-board / provider.bool", "flags.snapshot-from-board", "flags.provider.bool"),
        ("featureSet-read / snapshot-from-board", "flags.featureSet-read", "flags.snapshot-from-board"),
        ("provider.bool / isEnabled", "flags.provider.bool", "flags.isEnabled"),
        ("plugin-api.bool / provider.bool", "flags.plugin-api.bool", "flags.provider.bool"),
        ("by-flag.versions / by-flag.rollout.default", "flags.isEnabled.by-flag.versions", "flags.isEnabled.by-flag.rollout.default"),
        ("resolve / snapshot+resolve (200 plug-ins)", "registry.resolve.200", "registry.snapshot+resolve.200"),
        ("audit.verify.10000 / audit.verify.1000", "audit.verify.10000", "audit.verify.1000"),
    ]
    print("\n| ratio (p50 / p50, same run) | median | min – max |")
    print("|:--|--:|--:|")
    for label, top, bottom in ratios:
        values = [run[top]["wall"][2] / run[bottom]["wall"][2] for run in runs
                  if top in run and bottom in run and "wall" in run[top] and "wall" in run[bottom]]
        if values:
            digits = 0 if statistics.median(values) >= 100 else 2
            print(f"| {label} | {statistics.median(values):,.{digits}f} | {min(values):,.{digits}f} – {max(values):,.{digits}f} |")
    per_row = [run["audit.verify.10000"]["wall"][2] / 10_000 for run in runs if "audit.verify.10000" in run]
    if per_row:
        print(f"\naudit verify per row (10k rows, p50/10000): median {fmt_us(statistics.median(per_row))}, "
              f"{fmt_us(min(per_row))} – {fmt_us(max(per_row))}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
