#!/usr/bin/env python3
"""The per-seed testbed table of docs/results.md from `bosch compare` runs (their compare.json):
for each seed and ratio, the best static ranking (test S^) and, for bosch, bosch-plus and
bosch-layer, test S^ and the difference to that ranking with compare's own 95% paired-bootstrap
interval (bold where it excludes 0).
Usage: scripts/compare_table.py SEED=COMPARE.json [SEED=COMPARE.json ...]
  e.g. scripts/compare_table.py 0=docs/results/deep-compare/compare.json 1=docs/results/deep-compare-seed1/compare.json"""
import json
import sys

METHODS = [("bosch", "bosch (paper's three stages)"), ("bosch-plus", "bosch-plus (ours)"),
           ("bosch-layer", "bosch-layer (whole layers, the paper's ablation)")]


def cell(result):
    v = result["vs_best_baseline"]
    lo, hi = v["ci95"]
    d = f"{v['diff']:+.3f} [{lo:+.3f}, {hi:+.3f}]"
    test = f"{result['normalized']:.3f}"
    return f"{test}, **{d}**" if lo > 0 else f"{test}, {d}" + (" (worse)" if hi < 0 else "")


def main(args):
    if not args:
        sys.exit(__doc__)
    print("| seed | ratio | best static ranking (test S^) | " + " | ".join(t for _, t in METHODS) + " |")
    print("|---" * (3 + len(METHODS)) + "|")
    for arg in args:
        seed, path = arg.split("=", 1)
        data = json.load(open(path, encoding="utf-8"))
        by = {(r["method"], r["ratio"]): r for r in data["results"]}
        for ratio in data["ratios"]:
            first = next((by[(m, ratio)] for m, _ in METHODS if (m, ratio) in by), None)
            if first is None:
                continue
            base = first["vs_best_baseline"]["baseline"]
            best = f"{base} ({by[(base, ratio)]['normalized']:.3f})"
            cells = [cell(by[(m, ratio)]) if (m, ratio) in by else "-" for m, _ in METHODS]
            print(f"| {seed} | {ratio} | {best} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
