#!/usr/bin/python3
"""Writes the qwen3_tiny test fixture: a tiny random Qwen3 in the Hugging Face layout (written by
the same export code as the default model) and reference logits computed by model.py in float64,
so the C++ engine can be checked against PyTorch.

  /usr/bin/python3 -m tools.train.make_fixture            # -> tests/data/qwen3_tiny/

reference.json:
  text, ids             a short text and its ids (byte tokenizer)
  logits                [len(ids)][vocab] full-attention logits at every position
  long_ids              a longer sequence (positions up to 160)
  long                  [{"plan": [[layer, kv_head, window, sinks], ...] (SWA heads; [] = full),
                          "last_logits": [vocab], "argmax": [len(long_ids)]}]
The SWA semantics are the engine's: query i sees key j iff j <= i and (i - j < W or j < S).
"""
import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
from . import byte_tokenizer as bt
from .export import export_model
from .model import Qwen3, Qwen3Config, describe

TEXT = "Hello, bosch! ü€"
PLANS = [[], [[0, 1, 8, 2], [1, 0, 16, 0]], [[0, 0, 4, 1], [0, 1, 4, 1], [1, 0, 4, 1], [1, 1, 4, 1]]]


def fixture_model(seed):
    # head_dim * heads (64) != hidden (32), as in real Qwen3 models, so engines that assume
    # head_dim = hidden / heads fail here.
    cfg = Qwen3Config(vocab_size=bt.VOCAB_SIZE, hidden_size=32, intermediate_size=48,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      head_dim=16, rms_norm_eps=1e-6, rope_theta=10000.0,
                      max_position_embeddings=512, tie_word_embeddings=True)
    m = Qwen3(cfg)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in m.parameters():
            # norm weights away from 1 so a skipped or misplaced norm changes the logits
            p.copy_(1 + 0.3 * torch.randn(p.shape, generator=g) if p.dim() == 1
                    else 0.25 * torch.randn(p.shape, generator=g))
    return m.eval()


def rounded(t):
    return [float(f"{x:.7g}") for x in t.tolist()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "..", "..", "tests", "data", "qwen3_tiny"))
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    m = fixture_model(a.seed)
    print(describe(m.c))
    export_model(m, a.out, {"purpose": "test fixture, random weights", "seed": str(a.seed)})
    ref = m.double()
    ids = bt.encode(TEXT)
    g = torch.Generator().manual_seed(a.seed + 1)
    long_ids = torch.randint(0, 256, (160,), generator=g).tolist()
    out = {"text": TEXT, "ids": ids, "long_ids": long_ids, "long": []}
    with torch.no_grad():
        out["logits"] = [rounded(r) for r in ref(torch.tensor([ids]))[0]]
        for plan in PLANS:
            p = {(l, h): (w, s) for l, h, w, s in plan}
            logits = ref(torch.tensor([long_ids]), plan=p)[0]
            out["long"].append({"plan": plan, "last_logits": rounded(logits[-1]),
                                "argmax": logits.argmax(-1).tolist()})
    path = os.path.join(a.out, "reference.json")
    with open(path + ".tmp", "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    os.replace(path + ".tmp", path)
    total = sum(os.path.getsize(os.path.join(a.out, n)) for n in os.listdir(a.out))
    print(f"wrote {os.path.normpath(a.out)} ({total / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
