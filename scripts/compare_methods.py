#!/usr/bin/env python3
"""Method against method in one `bosch compare` run (the report compares each search only with the
best baseline): per ratio, the normalized test-score difference A - B with its 95% paired-bootstrap
interval over the test samples (scripts/paired_bootstrap.py).
Usage: scripts/compare_methods.py COMPARE.json A:B [A:B ...]
  e.g. scripts/compare_methods.py docs/results/deep-compare-ablations/compare.json bosch:bosch-multi"""
import json
import sys

from paired_bootstrap import paired_ci


def main(args):
    if len(args) < 2:
        sys.exit(__doc__)
    data = json.load(open(args[0], encoding="utf-8"))
    ref = data["references"]
    scale = ref["full"]["raw_score"] - ref["all_swa"]["raw_score"]  # normalized = (S - S_allswa) / scale
    by = {(r["method"], r["ratio"]): r for r in data["results"]}
    print("| ratio | A | B | A test S^ | B test S^ | A - B [95% CI] |")
    print("|---|---|---|---|---|---|")
    for ratio in data["ratios"]:
        for pair in args[1:]:
            a, b = pair.split(":")
            if (a, ratio) not in by or (b, ratio) not in by:
                sys.exit(f"{args[0]}: no result for {a} or {b} at ratio {ratio}")
            ra, rb = by[(a, ratio)], by[(b, ratio)]
            print(f"| {ratio} | {a} | {b} | {ra['normalized']:.3f} | {rb['normalized']:.3f} | "
                  f"{paired_ci(ra['test_per_sample'], rb['test_per_sample'], scale)} |")


if __name__ == "__main__":
    main(sys.argv[1:])
