#!/usr/bin/python3
"""Times one training step (fwd + bwd + AdamW) of the default architecture per sequence length.
Prints wall and process CPU seconds: on a shared machine CPU seconds / threads estimates the
wall time an idle machine would give.

  /usr/bin/python3 -m tools.train.bench_step --lengths 256,512,1024 --tokens-per-step 8192
"""
import argparse
import time

import torch
import torch.nn.functional as F

from .model import Qwen3, describe
from .train import batch_size_for, make_optimizer, model_config, parse_args


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", default="256,512,1024")
    ap.add_argument("--tokens-per-step", type=int, default=8192)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--model-args", default="", help="architecture flags of train.py, quoted")
    b = ap.parse_args()
    torch.set_num_threads(b.threads)
    a = parse_args(["--data", "-", "--out", "-"] + b.model_args.split())
    cfg = model_config(a)
    print(describe(cfg))
    model = Qwen3(cfg)
    model.init_weights(torch.Generator().manual_seed(0))
    opt = make_optimizer(model, a)
    for L in (int(x) for x in b.lengths.split(",")):
        B = batch_size_for(L, b.tokens_per_step)
        ids = torch.randint(0, 256, (B, L))
        walls, cpus = [], []
        for r in range(b.reps + 1):
            t0, c0 = time.time(), time.process_time()
            logits = model(ids)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids.reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            if r:  # first rep warms up allocator and caches
                walls.append(time.time() - t0)
                cpus.append(time.process_time() - c0)
        w, c = min(walls), min(cpus)
        print(f"len {L:5d} batch {B:3d}: wall {w:6.2f} s/step  cpu {c:6.2f} s/step  "
              f"(idle-machine estimate {c / b.threads:5.2f} s/step, "
              f"{B * L / max(1e-9, c / b.threads):.0f} tok/s)", flush=True)


if __name__ == "__main__":
    main()
