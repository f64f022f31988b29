#!/usr/bin/python3
"""Teacher-forced NIAH exact match of a PyTorch model on `bosch gen --jsonl` samples (the
engine's scoring: an answer counts when every one of its tokens is the argmax given the gold
prefix; a sample scores the share of its answers that count). A development diagnostic for the
trainer and the circuit: `bosch eval` on the exported model is the judge.

  /usr/bin/python3 -m tools.train.niah_eval MODEL_DIR SAMPLES.jsonl [--plan all-swa:64:4] [--limit N]
"""
import argparse
import json
import sys
from collections import defaultdict

import torch



def load_samples(path, limit=None):
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            d = json.loads(line)
            for field in ("prompt_ids", "continuation_ids", "answers", "family"):
                if field not in d:
                    raise ValueError(f"{path}:{n}: no field {field!r} (write it with `bosch gen --jsonl`)")
            out.append(d)
            if limit and len(out) >= limit:
                break
    return out


def answer_rows(s, skip_space=False):
    """[(rows, targets)] per answer: row r of the logits predicts token r + 1. skip_space:
    leave out an answer's leading ' ' (the circuit alone, before training, does not write it)."""
    ids = s["prompt_ids"] + s["continuation_ids"]
    n0 = len(s["prompt_ids"])
    res = []
    for a in s["answers"]:
        first = n0 + a["begin"]
        ks = [k for k in range(len(a["ids"])) if not (skip_space and k == 0 and a["ids"][0] == 32)]
        res.append(([first + k - 1 for k in ks], [a["ids"][k] for k in ks]))
    return ids, res


@torch.no_grad()
def score(model, samples, plan=None, skip_space=False):
    """{family: mean score}, plus 'all'; and the per-sample scores."""
    fam = defaultdict(list)
    per = []
    for s in samples:
        ids, answers = answer_rows(s, skip_space)
        logits = model(torch.tensor([ids]), plan=plan)[0]
        pred = logits.argmax(-1)
        ok = [all(int(pred[r]) == t for r, t in zip(rows, tg)) for rows, tg in answers]
        v = sum(ok) / len(ok)
        fam[s["family"]].append(v)
        per.append(v)
    out = {f: sum(v) / len(v) for f, v in fam.items()}
    out["all"] = sum(per) / len(per)
    return out, per


def parse_plan(text, c):
    if not text or text == "full":
        return None
    kind, w, s = text.split(":")
    if kind != "all-swa":
        raise ValueError(f"--plan: expected full or all-swa:W:S, got {text!r}")
    return {(l, h): (int(w), int(s)) for l in range(c.num_hidden_layers) for h in range(c.num_key_value_heads)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("samples")
    ap.add_argument("--plan", default="full")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--skip-space", action="store_true", help="do not score answers' leading ' '")
    a = ap.parse_args(argv)
    torch.set_num_threads(2)
    from .export import load_model_dir
    m = load_model_dir(a.model_dir)
    res, _ = score(m, load_samples(a.samples, a.limit), parse_plan(a.plan, m.c), a.skip_space)
    for k, v in res.items():
        print(f"{k:14s} {v:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
