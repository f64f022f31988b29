#!/usr/bin/env python3
"""Benchmark (not a test): the same `bosch search` as 1 process x T threads and as R ranks x 1
thread under mpirun (loopback), evaluations per second of each, their ratio (the parallel
efficiency of splitting the samples, on the same cores) and the payload bytes sent per evaluation.
The inputs of docs/mpi.md's scaling estimate.

  python3 scripts/bench_mpi.py [--bosch build/bosch] [--ranks 2] [--repeats 2] [-- extra search flags]
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

# A search of about a hundred evaluations on the default model (about a minute per configuration
# on two cores): 12 calibration samples of 512 tokens.
SEARCH = ["search", "--ratio", "0.5", "--method", "bosch", "--budget-probe", "6", "--budget-group", "12",
          "--budget-polish", "0", "--objective", "niah:single_noise,passkey", "--lengths", "512",
          "--depths", "6", "--window", "32", "--sinks", "4"]


def mpirun(n):
    cmd = ["mpirun", "-np", str(n), "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader,tcp",
           "--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo", "-x", "BOSCH_THREADS",
           "-x", "BOSCH_QUIET"]
    return cmd + (["--allow-run-as-root"] if os.getuid() == 0 else [])


def run(cmd, threads):
    env = dict(os.environ, BOSCH_THREADS=str(threads), BOSCH_QUIET="1")
    t0 = time.time()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)  # every rank, start-up included
    if p.returncode != 0:
        sys.exit(f"bench_mpi: {' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    # bosch's rate: computed evaluations per second inside the objective (under MPI: waits included)
    done = re.search(r"(\d+) evaluations \((\d+) computed.* in ([\d.]+) s[,(\s]+([\d.]+) evaluations/s", p.stderr)
    if not done:
        sys.exit(f"bench_mpi: no summary line in:\n{p.stderr[-2000:]}")
    b = re.search(r"(\d+) payload bytes sent per evaluation", p.stderr)
    shards = re.search(r"(\d+)-(\d+) of (\d+) samples each", p.stderr)
    return {"computed": int(done.group(2)), "seconds": float(done.group(3)), "eval_s": float(done.group(4)),
            "bytes": int(b.group(1)) if b else 0, "wall": time.time() - t0, "cpu": cpu,
            "shards": shards.group(0) if shards else "all samples"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bosch", default="build/bosch")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1, help="best of N runs per configuration")
    ap.add_argument("extra", nargs="*", help="more search flags (after --)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bosch_bench_mpi_") as d:
        args = SEARCH + a.extra + ["--out", os.path.join(d, "m.json")]
        configs = [(f"1 process x {a.ranks} threads", [a.bosch] + args, a.ranks),
                   (f"{a.ranks} ranks x 1 thread", mpirun(a.ranks) + [a.bosch] + args, 1),
                   ("1 process x 1 thread", [a.bosch] + args, 1)]
        res = {}
        for name, cmd, threads in configs:
            runs = [run(cmd, threads) for _ in range(a.repeats)]
            res[name] = max(runs, key=lambda r: r["eval_s"])
            r = res[name]
            print(f"{name:24s} {r['eval_s']:8.2f} evaluations/s  ({r['computed']} computed in {r['seconds']:.1f} s; "
                  f"CPU {r['cpu'] / r['computed']:.3f} s per evaluation, all processes and start-up included; "
                  f"{r['shards']}; {r['bytes']} payload bytes sent per evaluation)", flush=True)
    one, split, single = (res[n]["eval_s"] for n, _, _ in configs)
    print(f"ratio {a.ranks} ranks x 1 thread / 1 process x {a.ranks} threads: {split / one:.2f}")
    cpu = [res[n]["cpu"] / res[n]["computed"] for n, _, _ in configs]
    print(f"CPU per evaluation relative to 1 process x 1 thread: threads {cpu[0] / cpu[2]:.2f}, ranks "
          f"{cpu[1] / cpu[2]:.2f} (the work the split adds, whatever the machine's load)")
    print(f"speedup over 1 process x 1 thread: threads {one / single:.2f}, ranks {split / single:.2f} "
          f"(parallel efficiency {split / single / a.ranks:.2f} with {a.ranks} ranks)")
    b = res[configs[1][0]]["bytes"]
    print(f"payload sent per evaluation with {a.ranks} ranks: {b} bytes ({b * split / 1e3:.1f} kB/s at this rate)")


if __name__ == "__main__":
    main()
