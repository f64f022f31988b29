#!/usr/bin/env python3
"""Method against method in one `bosch compare` run (the report compares each search only with the
best baseline): per ratio, the normalized test-score difference A - B with its 95% paired-bootstrap
interval over the test samples, computed by `bosch versus` (compare's own bootstrap).
Usage: scripts/compare_methods.py COMPARE.json A:B [A:B ...]     ($BOSCH: the binary, default build/bosch)
  e.g. scripts/compare_methods.py docs/results/deep-compare-ablations/compare.json bosch:bosch-multi"""
import json
import sys

from versus import versus


def main(args):
    if len(args) < 2:
        sys.exit(__doc__)
    data = json.load(open(args[0], encoding="utf-8"))
    print("| ratio | A | B | A test S^ | B test S^ | A - B [95% CI] |")
    print("|---|---|---|---|---|---|")
    for ratio in data["ratios"]:
        for pair in args[1:]:
            a, b = pair.split(":")
            v = versus(args[0], a, args[0], b, ratio)
            print(f"| {ratio} | {a} | {b} | {v['a_normalized']:.3f} | {v['b_normalized']:.3f} | {v['text']} |")


if __name__ == "__main__":
    main(sys.argv[1:])
