"""The result-table scripts (scripts/compare_methods.py, compare_table.py) on small compare.json
files whose answer is known: method a answers every test sample, b none, c as b but one; the
intervals must say so, and compare_table must read compare's own intervals, never report.md."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(__file__), "..", "..", "scripts")
SCRIPT = os.path.join(SCRIPTS, "compare_methods.py")


def result(method, per_sample):
    return {"method": method, "ratio": 0.75, "normalized": sum(per_sample) / len(per_sample),
            "test_per_sample": per_sample}


class CompareMethods(unittest.TestCase):
    def run_script(self, *pairs):
        data = {"ratios": [0.75],
                "references": {"full": {"raw_score": 1.0}, "all_swa": {"raw_score": 0.0}},
                "results": [result("a", [1.0] * 40), result("b", [0.0] * 40), result("c", [1.0] + [0.0] * 39)]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "compare.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(data, f)
            return subprocess.run([sys.executable, SCRIPT, path, *pairs], capture_output=True, text=True)

    def test_a_clear_difference_and_a_tie(self):
        out = self.run_script("a:b", "c:b")
        self.assertEqual(out.returncode, 0, out.stderr)
        rows = [l for l in out.stdout.splitlines() if l.startswith("| 0.75")]
        self.assertEqual(rows[0], "| 0.75 | a | b | 1.000 | 0.000 | +1.000 [+1.000, +1.000] (better) |")
        self.assertTrue(rows[1].startswith("| 0.75 | c | b | 0.025 | 0.000 | +0.025 [+0.000, "), rows[1])
        self.assertNotIn("better", rows[1])  # one answer in 40 is no evidence

    def test_an_unknown_method_is_named(self):
        out = self.run_script("a:zzz")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("no result for method 'zzz' at ratio 0.75", out.stderr)


class CompareTable(unittest.TestCase):
    def test_reads_compare_json_intervals(self):
        def row(method, test, diff, lo, hi):
            return {"method": method, "ratio": 0.75, "normalized": test,
                    "vs_best_baseline": {"baseline": "gate", "diff": diff, "ci95": [lo, hi]}}
        data = {"ratios": [0.75], "results": [
            {"method": "gate", "ratio": 0.75, "normalized": 0.5},
            row("bosch", 0.9, 0.4, 0.3, 0.5), row("bosch-plus", 0.45, -0.05, -0.1, -0.01),
            row("bosch-layer", 0.5, 0.0, -0.02, 0.02)]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "compare.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(data, f)
            out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "compare_table.py"), f"7={path}"],
                                 capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.splitlines()[2],
                         "| 7 | 0.75 | gate (0.500) | 0.900, **+0.400 [+0.300, +0.500]** | "
                         "0.450, -0.050 [-0.100, -0.010] (worse) | 0.500, +0.000 [-0.020, +0.020] |")


if __name__ == "__main__":
    unittest.main()
