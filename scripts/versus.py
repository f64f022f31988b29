"""`bosch versus` from Python, for the study scripts: the paired bootstrap of two methods' test
scores (compare's own, 10,000 resamples, 95% percentile interval), never a second copy of it."""
import json
import os
import subprocess


def versus(a_file, a_method, b_file, b_method, ratio):
    """{"diff", "ci95": [lo, hi], "text": "+d [lo, hi] (better|worse)", ...} of A - B at `ratio`."""
    bosch = os.environ.get("BOSCH", "build/bosch")
    out = subprocess.run([bosch, "versus", f"{a_file}:{a_method}", f"{b_file}:{b_method}", "--ratios", str(ratio),
                          "--json"], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(out.stderr.strip() or f"bosch versus failed ({out.returncode})")
    return json.loads(out.stdout)[0]
