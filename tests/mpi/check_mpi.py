#!/usr/bin/env python3
"""bosch under mpirun (docs/mpi.md), on the default model, loopback only.

  check_mpi.py search_bit_identical BOSCH MPIRUN WITH_MPI
      one process vs mpirun -np 2 and -np 3 (oversubscribed): the same journal bytes, mask and scores
  check_mpi.py rank_killed_then_resumed ...
      rank 1 killed mid-search: the run ends quickly with a clear error on rank 0; a rank that hangs:
      rank 0 gives up after BOSCH_MPI_TIMEOUT naming it; either journal resumed with another rank
      count ends with the mask and journal of one uninterrupted process
  check_mpi.py baseline_compare_bit_identical ...
      bosch baseline (single-head sweep) and bosch compare (test-split scoring): the same results

Exit 77 (SKIPPED) when bosch was built without MPI or mpirun is absent.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SMALL = ["--objective", "niah:single_noise", "--lengths", "512", "--depths", "6", "--window", "16", "--sinks", "2"]
# --kl-weight: every per-sample term of S crosses the ranks
SEARCH = ["search", "--ratio", "0.5", "--method", "bosch", "--budget-probe", "4", "--budget-group", "8",
          "--budget-polish", "0", "--kl-weight", "0.1"] + SMALL


def mpirun_cmd(mpirun, n):
    cmd = [mpirun, "-np", str(n), "--oversubscribe", "--bind-to", "none",
           "--mca", "btl", "self,vader,tcp", "--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo",
           "-x", "BOSCH_THREADS", "-x", "BOSCH_MPI_TIMEOUT", "-x", "BOSCH_MPI_TEST_KILL", "-x", "BOSCH_QUIET"]
    if os.getuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def run(bosch, mpirun, n, args, extra_env=None, timeout=300):
    env = dict(os.environ, BOSCH_THREADS="1", BOSCH_QUIET="1", BOSCH_MPI_TIMEOUT="60", BOSCH_MPI_TEST_KILL="")
    env.update(extra_env or {})
    cmd = ([bosch] if n == 0 else mpirun_cmd(mpirun, n) + [bosch]) + args
    t0 = time.time()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr, time.time() - t0


def ok(bosch, mpirun, n, args, **kw):
    rc, out, _ = run(bosch, mpirun, n, args, **kw)
    if rc != 0:
        sys.exit(f"FAIL: {'one process' if n == 0 else f'-np {n}'}: bosch {' '.join(args)} exited {rc}:\n{out[-3000:]}")
    return out


VOLATILE = re.compile(r"second|layer_forward|work|journal|computed|replayed|memo_hits|model_path")


def stable(j):
    """The JSON without timings, cost counters and paths (they differ between runs, not the answer)."""
    if isinstance(j, dict):
        return {k: stable(v) for k, v in j.items() if not VOLATILE.search(k)}
    if isinstance(j, list):
        return [stable(v) for v in j]
    return j


def read(path):
    with open(path) as f:
        return f.read()


def expect(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def search_bit_identical(bosch, mpirun, d):
    runs = {}
    for n in (0, 2, 3):  # 0: no launcher at all
        out = os.path.join(d, f"np{n}.json")
        ok(bosch, mpirun, n, SEARCH + ["--out", out, "--journal", out + ".jsonl"])
        runs[n] = (json.loads(read(out)), read(out + ".jsonl"))
    base_mask, base_journal = runs[0]
    lines = base_journal.count("\n")
    expect(lines > 20, f"the one-process journal has only {lines} lines")
    for n in (2, 3):
        mask, journal = runs[n]
        expect(journal == base_journal, f"-np {n}: the journal differs from one process's")
        expect(mask["swa"] == base_mask["swa"], f"-np {n}: the mask differs")
        expect(stable(mask) == stable(base_mask), f"-np {n}: the scores in the mask file differ")
    # Only rank 0 wrote: no stray files (journal, mask, temporaries) besides the expected ones.
    expect(sorted(os.listdir(d)) == sorted(f"np{n}.json{e}" for n in (0, 2, 3) for e in ("", ".jsonl")),
           f"unexpected files: {sorted(os.listdir(d))}")
    print(f"search: -np 2 and -np 3 give the one-process journal ({lines} lines, byte for byte) and mask")


def rank_killed_then_resumed(bosch, mpirun, d):
    ref = os.path.join(d, "ref.json")
    ok(bosch, mpirun, 0, SEARCH + ["--out", ref, "--journal", ref + ".jsonl"])
    ref_journal = read(ref + ".jsonl")
    # Rank 1 dies (SIGKILL) at its 12th evaluation: the launcher ends rank 0, which says why.
    out = os.path.join(d, "killed.json")
    rc, log, secs = run(bosch, mpirun, 2, SEARCH + ["--out", out, "--journal", out + ".jsonl"],
                        {"BOSCH_MPI_TEST_KILL": "1:12"})
    expect(rc != 0, "a killed rank: the run exited 0")
    expect(secs < 60, f"a killed rank: the run took {secs:.0f} s to end")
    expect("bosch: error: MPI rank 0" in log and "another rank died" in log,
           f"a killed rank: no clear error from rank 0:\n{log[-2000:]}")
    partial = read(out + ".jsonl")
    expect(ref_journal.startswith(partial) and 0 < partial.count("\n") < ref_journal.count("\n"),
           "a killed rank: the journal is not a prefix of the uninterrupted one")
    print(f"killed rank: ended in {secs:.1f} s, rc {rc}, rank 0 said why; {partial.count(chr(10))} journal lines kept")
    # Rank 2 of 3 hangs (SIGSTOP) at its 20th evaluation: the launcher sees nothing; rank 0 gives up.
    hung = os.path.join(d, "hung.json")
    rc, log, secs = run(bosch, mpirun, 3, SEARCH + ["--out", hung, "--journal", hung + ".jsonl"],
                        {"BOSCH_MPI_TEST_KILL": "2:20:stop", "BOSCH_MPI_TIMEOUT": "8"})
    expect(rc != 0, "a hung rank: the run exited 0")
    expect(secs < 60, f"a hung rank: the run took {secs:.0f} s to end with BOSCH_MPI_TIMEOUT=8")
    expect(re.search(r"bosch: error: MPI rank 0: no answer within 8 s .* from rank\(s\) 2", log),
           f"a hung rank: rank 0 did not name it:\n{log[-2000:]}")
    print(f"hung rank: rank 0 gave up after the 8 s timeout ({secs:.1f} s in all), naming rank 2")
    # Resumed with other rank counts: the mask and every journal line of the uninterrupted process.
    for path, n in ((out, 3), (hung, 2)):
        ok(bosch, mpirun, n, SEARCH + ["--out", path, "--resume", path + ".jsonl"])
        expect(read(path + ".jsonl") == ref_journal, f"resumed with -np {n}: the journal differs from one process's")
        expect(json.loads(read(path))["swa"] == json.loads(read(ref))["swa"], f"resumed with -np {n}: the mask differs")
    print("resume: -np 3 after the kill and -np 2 after the hang end with the one-process mask and journal")


def baseline_compare_bit_identical(bosch, mpirun, d):
    for n in (0, 2):
        ok(bosch, mpirun, n, ["baseline", "--method", "ablation", "--ratio", "0.5", "--out",
                              os.path.join(d, f"ablation{n}.json")] + SMALL)
    a0, a2 = (json.loads(read(os.path.join(d, f"ablation{n}.json"))) for n in (0, 2))
    expect(a0["swa"] == a2["swa"] and stable(a0) == stable(a2), "baseline ablation: -np 2 differs from one process")
    print("baseline ablation (single-head sweep): -np 2 gives the one-process mask and scores")
    for n in (0, 3):
        ok(bosch, mpirun, n, ["compare", "--ratios", "0.5", "--methods", "bosch,gate,intr", "--budget-probe", "4",
                              "--budget-group", "4", "--budget-polish", "0", "--test-depths", "4",
                              "--json", os.path.join(d, f"compare{n}.json")] + SMALL)
    c0, c3 = (stable(json.loads(read(os.path.join(d, f"compare{n}.json")))) for n in (0, 3))
    expect(c0 == c3, "compare: -np 3 results differ from one process's")
    expect(len(c0["results"]) >= 3, "compare: too few results")
    print(f"compare ({len(c0['results'])} rows, test-split scores): -np 3 gives the one-process results")


def main():
    test, bosch, mpirun, with_mpi = sys.argv[1:5]
    if with_mpi.upper() not in ("ON", "TRUE", "1"):
        print("SKIPPED: bosch was built without MPI (install libopenmpi-dev openmpi-bin: scripts/install-deps.sh)")
        return 77
    if not mpirun or not shutil.which(mpirun):
        print("SKIPPED: mpirun not found (install openmpi-bin: scripts/install-deps.sh)")
        return 77
    with tempfile.TemporaryDirectory(prefix=f"bosch_mpi_{test}_") as d:
        globals()[test](bosch, mpirun, d)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
