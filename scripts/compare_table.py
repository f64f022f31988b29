#!/usr/bin/env python3
"""The README's per-seed testbed table from `bosch compare` reports: for each seed and ratio, the
best static ranking (test S^) and, for bosch, bosch-plus and bosch-layer, test S^ and the
difference to that ranking with its 95% paired-bootstrap interval (bold where it excludes 0).
Usage: scripts/compare_table.py SEED=REPORT.md [SEED=REPORT.md ...]
  e.g. scripts/compare_table.py 0=docs/results/deep-compare/report.md 1=docs/results/deep-compare-seed1/report.md"""
import re
import sys

ROW = re.compile(r"\| (0\.\d+) \| (bosch[\w-]*) \| ([-\d.]+) \| ([-\d.]+) \| (\S+) \(([-\d.]+)\) \| ([^|]+) \|")
METHODS = [("bosch", "bosch (paper's three stages)"), ("bosch-plus", "bosch-plus (ours)"),
           ("bosch-layer", "bosch-layer (whole layers, the paper's ablation)")]


def cell(test, diff):
    better, worse = "(better)" in diff, "(worse)" in diff
    d = diff.replace("(better)", "").replace("(worse)", "").strip()
    return f"{test}, **{d}**" if better else f"{test}, {d}" + (" (worse)" if worse else "")


def main(args):
    if not args:
        sys.exit(__doc__)
    print("| seed | ratio | best static ranking (test S^) | " + " | ".join(t for _, t in METHODS) + " |")
    print("|---" * (3 + len(METHODS)) + "|")
    for arg in args:
        seed, path = arg.split("=", 1)
        rows = {}
        for line in open(path, encoding="utf-8"):
            m = ROW.match(line)
            if m:
                ratio, method, _calib, test, base, base_s, diff = m.groups()
                rows.setdefault(ratio, {"base": f"{base} ({base_s})"})[method] = cell(test, diff)
        for ratio, r in sorted(rows.items(), key=lambda kv: float(kv[0])):
            print(f"| {seed} | {ratio} | {r['base']} | " + " | ".join(r.get(m, "-") for m, _ in METHODS) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
