#!/usr/bin/python3
"""Trains the default model (issue #5) on JSONL from `bosch gen --train` and exports it as a
Hugging Face directory. Deterministic from --seed for a given step plan; CPU, 2 threads.

  /usr/bin/python3 -m tools.train.train --data train.jsonl --out models/default --minutes 80

Length curriculum: --phases "256:0.25,512:0.3,1024:0.45" gives each phase's maximum sample
length (tokens = bytes) and its share of the time budget; the batch size of a phase is
--tokens-per-step / length. Before training, one fwd+bwd per phase is timed and the budget
turned into a fixed step plan (printed; pass it back with --plan to reproduce a run exactly).
Loss: next-token cross-entropy, answer-span tokens weighted --answer-weight, padding 0.
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from . import byte_tokenizer
from .circuit_init import frozen_masks, implant_circuit
from .data import PhasePool, length_histogram, load_jsonl
from .export import export_model, load_model_dir
from .model import Qwen3, Qwen3Config, describe

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", action="append", required=True, help="training JSONL (repeatable)")
    ap.add_argument("--out", required=True, help="model directory to export to at the end")
    ap.add_argument("--ckpt", default=os.path.join(REPO, "build-train", "ckpt.pt"))
    ap.add_argument("--resume", action="store_true", help="continue from --ckpt (its plan and args)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--minutes", type=float, default=80.0, help="time budget the plan is fitted to")
    ap.add_argument("--hard-minutes", type=float, default=None,
                    help="stop and export no matter what (default: 1.12 x --minutes)")
    ap.add_argument("--phases", default="256:0.25,512:0.3,1024:0.45",
                    help="LEN:TIME_SHARE,... (max sample tokens per phase, share of the budget)")
    ap.add_argument("--plan", default=None, help="LEN:STEPS,... fixed steps per phase (skips timing)")
    ap.add_argument("--tokens-per-step", type=int, default=8192)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min-lr-ratio", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=None, help="warmup steps (default 3%% of total, >= 20)")
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--qk-norm-lr-mult", type=float, default=3.0)
    ap.add_argument("--qk-norm-init", type=float, default=1.0, help="initial q/k RMSNorm gain")
    ap.add_argument("--no-induction-init", action="store_true",
                    help="plain random init (default: the retrieval circuit of circuit_init.py in "
                         "layers 0-5 and the reserved residual coordinates, kept frozen)")
    ap.add_argument("--train-circuit", action="store_true",
                    help="let the circuit's weights train too (default: circuit_init.frozen_masks "
                         "are restored after every step)")
    ap.add_argument("--init-from", default=None,
                    help="start from this checkpoint's (or exported model directory's) weights (same "
                         "architecture) with a new plan and a fresh optimizer: a second training stage; "
                         "the circuit it brings stays frozen (frozen_masks of the loaded weights) unless "
                         "--train-circuit, or --no-induction-init for a source without one")
    ap.add_argument("--answer-weight", type=float, default=5.0)
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--eval-every", type=int, default=0, help="steps between evals (0: ~8 per run)")
    ap.add_argument("--val-samples", type=int, default=16)
    ap.add_argument("--ckpt-minutes", type=float, default=5.0)
    ap.add_argument("--stop-after", type=int, default=None,
                    help="stop after this many steps of this invocation (checkpoint; --resume goes on)")
    ap.add_argument("--max-samples", type=int, default=None, help="read at most this many lines")
    ap.add_argument("--export-dtype", choices=["float32", "float16"], default="float32")
    # architecture
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=240)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--ffn", type=int, default=192)
    ap.add_argument("--rope-theta", type=float, default=1e24)
    ap.add_argument("--tied", action="store_true", help="tie the LM head to the embedding (the "
                    "circuit needs an untied head: with --no-induction-init only)")
    ap.add_argument("--max-positions", type=int, default=4096)
    return ap.parse_args(argv)


def parse_pairs(text, kind):
    out = []
    for part in text.split(","):
        a, _, b = part.partition(":")
        try:
            out.append((int(a), kind(b)))
        except ValueError:
            sys.exit(f"error: bad phase entry {part!r} in {text!r} (expected LEN:{kind.__name__.upper()})")
    return out


def model_config(a):
    return Qwen3Config(vocab_size=byte_tokenizer.VOCAB_SIZE, hidden_size=a.hidden,
                       intermediate_size=a.ffn, num_hidden_layers=a.layers,
                       num_attention_heads=a.heads, num_key_value_heads=a.kv_heads,
                       head_dim=a.head_dim, rope_theta=a.rope_theta,
                       max_position_embeddings=a.max_positions, tie_word_embeddings=a.tied)


def batch_size_for(length, tokens_per_step):
    return max(1, round(tokens_per_step / length))


def make_optimizer(model, a):
    """AdamW. Matrices decay; norms and the (tied) embedding do not. The q/k norm gains get
    --qk-norm-lr-mult x the learning rate: with q/k RMSNorm the attention logits are bounded
    by |q_norm| * |k_norm| * sqrt(head_dim), so sharp retrieval over 1000+ tokens needs these
    gains to grow well above their initial 1, and Adam moves a weight by at most ~lr a step."""
    decay, no_decay, qk = [], [], []
    for name, p in model.named_parameters():
        if name.endswith("q_norm.weight") or name.endswith("k_norm.weight"):
            qk.append(p)
        elif p.dim() == 2 and "embed_tokens" not in name:
            decay.append(p)
        else:
            no_decay.append(p)
    return torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay, "lr_mult": 1.0},
                              {"params": no_decay, "weight_decay": 0.0, "lr_mult": 1.0},
                              {"params": qk, "weight_decay": 0.0, "lr_mult": a.qk_norm_lr_mult}],
                             lr=a.lr, betas=(0.9, 0.95), eps=1e-8)


def lr_at(step, total, a, warmup):
    if step < warmup:
        return a.lr * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    lo = a.lr * a.min_lr_ratio
    return lo + 0.5 * (a.lr - lo) * (1 + math.cos(math.pi * progress))


def loss_terms(logits, targets, answer, valid, answer_weight):
    """Weighted loss and per-batch statistics."""
    V = logits.shape[-1]
    ce = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), reduction="none").view_as(targets)
    w = valid.float() * torch.where(answer, torch.tensor(answer_weight), torch.tensor(1.0))
    loss = (ce * w).sum() / w.sum().clamp_min(1.0)
    with torch.no_grad():
        pred = logits.argmax(-1)
        ans = answer & valid
        other = valid & ~answer
        stats = {
            "ce_other": float((ce * other).sum()), "n_other": int(other.sum()),
            "ce_ans": float((ce * ans).sum()), "n_ans": int(ans.sum()),
            "ok_ans": int(((pred == targets) & ans).sum()),
        }
    return loss, stats


def time_step(model, length, batch, reps=2):
    """Seconds for one fwd+bwd at [batch, length] (random ids; gradients discarded)."""
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 256, (batch, length), generator=g)
    times = []
    for _ in range(reps + 1):
        t0 = time.time()
        logits = model(ids)
        F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids.reshape(-1)).backward()
        times.append(time.time() - t0)
    model.zero_grad(set_to_none=True)
    return min(times[1:])


def make_plan(model, a, phases, deadline_s, t_start, val_count):
    """[(length, steps, batch)] fitting the phases' time shares into what is left of the budget
    after timing one fwd+bwd per phase, the evals, the final layer table and the export."""
    timed = []
    for length, share in phases:
        b = batch_size_for(length, a.tokens_per_step)
        timed.append((length, share, b, time_step(model, length - 1, b)))
    # a forward of one longest sample costs ~1/(3 * batch) of a training step at that length
    L, _, b, t = max(timed)
    fwd = t / (3 * b)
    reserve = 20 + fwd * val_count * (2 * 9 + a.layers + 1)  # ~9 evals x 2 plans + layer table
    budget = deadline_s - (time.time() - t_start) - reserve
    total_share = sum(x[1] for x in timed)
    plan = []
    for length, share, b, t in timed:
        # optimizer step, data and logging add a few percent over fwd+bwd
        steps = max(1, int(budget * share / total_share / (t * 1.06)))
        print(f"timing: length {length} batch {b}: {t:.2f} s/step -> {steps} steps", flush=True)
        plan.append((length, steps, b))
    return plan


def spans_of(mask_row):
    """Contiguous runs of True: list of (begin, end)."""
    idx = np.flatnonzero(mask_row)
    if idx.size == 0:
        return []
    cuts = np.flatnonzero(np.diff(idx) > 1)
    begins = np.concatenate([[idx[0]], idx[cuts + 1]])
    ends = np.concatenate([idx[cuts] + 1, [idx[-1] + 1]])
    return list(zip(begins.tolist(), ends.tolist()))


@torch.no_grad()
def evaluate(model, val, window=64, sinks=4, plans=None):
    """Answer-token accuracy and span exact match (teacher-forced argmax) under attention plans
    (default: full, and all heads SWA(window, sinks)). A diagnostic: `bosch eval` is the judge."""
    model.eval()
    c = model.c
    if plans is None:
        plans = {"full": None, f"swa{window}": {(l, h): (window, sinks) for l in range(c.num_hidden_layers)
                                               for h in range(c.num_key_value_heads)}}
    res = {}
    for name, plan in plans.items():
        ok_tok = n_tok = ok_span = n_span = 0
        ce_sum = 0.0
        for s in val:
            ids = torch.from_numpy(s.ids[None, :-1])
            tgt = s.ids[1:]
            ans = s.answer[1:]
            logits = model(ids, plan=plan)[0]
            pred = logits.argmax(-1).numpy()
            ce = F.cross_entropy(logits, torch.from_numpy(tgt), reduction="none").numpy()
            ce_sum += float(ce[ans].sum())
            hit = pred == tgt
            ok_tok += int(hit[ans].sum())
            n_tok += int(ans.sum())
            for b, e in spans_of(ans):
                n_span += 1
                ok_span += int(hit[b:e].all())
        res[name] = (ok_tok / max(1, n_tok), ok_span / max(1, n_span), ce_sum / max(1, n_tok), n_span)
    model.train()
    return res


def qk_gain(model):
    """Mean over layers of mean|q_norm| * mean|k_norm| (1 at init; see make_optimizer)."""
    g = [float(l.self_attn.q_norm.weight.abs().mean() * l.self_attn.k_norm.weight.abs().mean())
         for l in model.layers]
    return sum(g) / len(g)


def layer_table(model, val, window=64, sinks=4):
    """Span exact match with one layer entirely SWA(window, sinks), for each layer."""
    c = model.c
    plans = {"full": None}
    for layer in range(c.num_hidden_layers):
        plans[f"layer {layer}"] = {(layer, h): (window, sinks) for h in range(c.num_key_value_heads)}
    res = evaluate(model, val, plans=plans)
    base = res["full"][1]
    lines = [f"one layer SWA({window},{sinks}) on the validation samples (python diagnostic):"]
    for name, (tok, em, ce, _) in res.items():
        lines.append(f"  {name:8s}  span-EM {em:.3f}  (cost {base - em:+.3f})  ans-tok {tok:.3f}  ans-ce {ce:.3f}")
    return "\n".join(lines)


def format_eval(res):
    return "  ".join(f"{k}: ans-tok {v[0]:.3f} span-EM {v[1]:.3f} ans-ce {v[2]:.3f}"
                     for k, v in res.items()) + f"  ({next(iter(res.values()))[3]} spans)"


def save_checkpoint(path, model, opt, step, plan, elapsed, a):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step,
                "plan": plan, "elapsed": elapsed, "args": vars(a),
                "model_config": model.c.to_dict()}, tmp)
    os.replace(tmp, path)


def fmt_time(s):
    s = int(s)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def load_resume(a):
    """The checkpoint to resume (None without --resume); its arguments replace a's, except the
    ones that may change between invocations."""
    if not a.resume:
        return None
    if not os.path.exists(a.ckpt):
        sys.exit(f"error: --resume but no checkpoint at {a.ckpt}")
    resume = torch.load(a.ckpt, map_location="cpu")
    keep = {"data", "out", "ckpt", "resume", "threads", "hard_minutes", "log_every", "stop_after"}
    for k, v in resume["args"].items():
        if k not in keep:
            setattr(a, k, v)
    print(f"resuming {a.ckpt} at step {resume['step']} ({fmt_time(resume['elapsed'])} done)")
    return resume


def load_init_weights(model, cfg, path):
    """--init-from: weights of a checkpoint or an exported model directory of the same
    architecture."""
    if os.path.isdir(path):  # an exported model directory (e.g. models/default)
        src_model = load_model_dir(path)
        src = {"model_config": src_model.c.to_dict(), "model": src_model.state_dict(), "step": "exported"}
    else:
        src = torch.load(path, map_location="cpu")
    speed_only = {"attn_chunk"}  # not part of the architecture
    same = {k: v for k, v in src["model_config"].items() if k not in speed_only} == \
        {k: v for k, v in cfg.to_dict().items() if k not in speed_only}
    if not same:
        sys.exit(f"error: --init-from {path}: architecture {src['model_config']} differs "
                 f"from this run's {cfg.to_dict()}")
    model.load_state_dict(src["model"])
    print(f"weights from {path} (step {src['step']})", flush=True)


def init_model(a, resume):
    """The model (random init, then --init-from weights or the implanted circuit) and the
    frozen circuit: [(parameter, mask)], whose values are taken once a resume has loaded."""
    torch.manual_seed(a.seed)
    cfg = model_config(a)
    model = Qwen3(cfg)
    model.init_weights(torch.Generator().manual_seed(a.seed), qk_norm_init=a.qk_norm_init)
    if a.init_from and not resume:
        load_init_weights(model, cfg, a.init_from)
    elif not a.no_induction_init:
        implant_circuit(model, torch.Generator().manual_seed(a.seed + 1))
    frozen = []
    if not a.train_circuit and not a.no_induction_init:  # also the circuit an --init-from model brings
        params = dict(model.named_parameters())
        frozen = [(params[n], m) for n, m in frozen_masks(model).items()]
        print(f"frozen circuit: {sum(int(m.sum()) for _, m in frozen):,} weights", flush=True)
    print(describe(cfg), flush=True)
    return model, frozen


def load_data(a, longest):
    """(training samples, validation samples): validation takes --val-samples of the longest
    phase's length, evenly spread over the files, never trained on."""
    samples = load_jsonl(a.data, a.max_samples)
    n_ans = sum(int(s.answer.sum()) for s in samples)
    n_tok = sum(len(s.ids) for s in samples)
    print(f"data: {len(samples)} samples, {n_tok:,} tokens ({n_ans / max(1, n_tok):.1%} answer); "
          f"lengths {length_histogram(samples)}", flush=True)
    val_pool = [s for s in samples if longest // 2 < len(s.ids) <= longest]
    val = []
    if a.val_samples and len(val_pool) > 4 * a.val_samples:
        val = [val_pool[round(i * (len(val_pool) - 1) / (a.val_samples - 1))] if a.val_samples > 1
               else val_pool[-1] for i in range(a.val_samples)]
    val_ids = {id(s) for s in val}
    return [s for s in samples if id(s) not in val_ids], val


def step_plan(a, model, phases, resume, t_start, n_val):
    """[(length, steps, batch)]: the checkpoint's, --plan's, or fitted to the time budget."""
    if resume:
        return [tuple(p) for p in resume["plan"]]
    if a.plan:
        return [(L, n, batch_size_for(L, a.tokens_per_step)) for L, n in parse_pairs(a.plan, int)]
    return make_plan(model, a, phases, 60 * a.minutes, t_start, n_val)


def print_plan(a, plan, pools, warmup, n_val, longest):
    total = sum(n for _, n, _ in plan)
    tokens_planned = sum(n * b * (L - 1) for L, n, b in plan)
    print(f"plan: --plan {plan_text_of(plan)}  ({total} steps, ~{tokens_planned / 1e6:.1f}M tokens at most; "
          f"warmup {warmup}, lr {a.lr:g}, answer weight {a.answer_weight:g}, seed {a.seed})")
    for (L, n, b), pool in zip(plan, pools):
        print(f"  phase len<={L}: {n} steps x batch {b}, pool {len(pool.samples)} samples, "
              f"{pool.epochs(n, b):.2f} epochs")
    print(f"validation: {n_val} samples of length <= {longest}", flush=True)


def plan_text_of(plan):
    return ",".join(f"{L}:{n}" for L, n, _ in plan)


def phase_of(plan, step):
    """(phase index, step within the phase) of a global step."""
    within, phase = step, 0
    while within >= plan[phase][1]:
        within -= plan[phase][1]
        phase += 1
    return phase, within


class StepLog:
    """Loss statistics summed between two log lines."""
    KEYS = ("ce_other", "n_other", "ce_ans", "n_ans", "ok_ans")

    def __init__(self):
        self.reset()

    def reset(self):
        self.loss, self.steps, self.tokens = 0.0, 0, 0
        self.sums = dict.fromkeys(self.KEYS, 0)
        self.t0 = time.time()

    def add(self, loss, stats, tokens):
        self.loss += float(loss)
        self.steps += 1
        for k in self.KEYS:
            self.sums[k] += stats[k]
        self.tokens += tokens

    def line(self, step, total, length, batch, lr, gnorm, elapsed, eta):
        s = self.sums
        return (f"step {step:5d}/{total} len {length:4d}x{batch:<3d} loss {self.loss / self.steps:.4f} "
                f"ce-text {s['ce_other'] / max(1, s['n_other']):.3f} "
                f"ce-ans {s['ce_ans'] / max(1, s['n_ans']):.3f} "
                f"acc-ans {s['ok_ans'] / max(1, s['n_ans']):.3f} lr {lr:.2e} gnorm {gnorm:.2f} "
                f"tok/s {self.tokens / max(1e-9, time.time() - self.t0):.0f} elapsed {fmt_time(elapsed)} "
                f"eta {fmt_time(eta)}")


def train_step(model, opt, frozen_values, batch, lr, answer_weight):
    """One optimizer step; the frozen circuit's entries are restored after it. Returns
    (loss, stats, gradient norm)."""
    inp, tgt, ans, valid = batch
    for g in opt.param_groups:
        g["lr"] = lr * g["lr_mult"]
    logits = model(inp)
    loss, stats = loss_terms(logits, tgt, ans, valid, answer_weight)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    with torch.no_grad():  # the frozen circuit's gradients must not eat the clipping budget
        for p, m, _ in frozen_values:
            if p.grad is not None:
                p.grad[m] = 0
    gnorm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
    opt.step()
    with torch.no_grad():
        for p, m, v in frozen_values:
            p[m] = v
    return loss, stats, gnorm


def train_loop(a, model, opt, frozen_values, plan, pools, val, warmup, step, elapsed0, t_start):
    """Runs the plan from `step`; checkpoints, logs and evaluates on the way. Returns
    (steps done, stopped early)."""
    total = sum(n for _, n, _ in plan)
    first_step = step
    hard_s = 60 * (a.hard_minutes if a.hard_minutes else a.minutes * 1.12)
    eval_every = a.eval_every or max(50, total // 8)
    t_run = t_ckpt = time.time()
    log = StepLog()
    model.train()
    while step < total:
        phase, within = phase_of(plan, step)
        L, _, B = plan[phase]
        batch = [torch.from_numpy(x) for x in pools[phase].batch(within, B, byte_tokenizer.EOT_ID)]
        lr = lr_at(step, total, a, warmup)
        loss, stats, gnorm = train_step(model, opt, frozen_values, batch, lr, a.answer_weight)
        step += 1
        log.add(loss, stats, int(batch[3].sum()))

        elapsed = elapsed0 + time.time() - t_start  # wall time incl. loading and timing
        if step % a.log_every == 0 or step == total:
            eta = (time.time() - t_run) / max(1, step - first_step) * (total - step)
            print(log.line(step, total, L, B, lr, gnorm, elapsed, eta), flush=True)
            log.reset()
        if val and (step % eval_every == 0 or step == total):
            print(f"eval  {step:5d}: {format_eval(evaluate(model, val))}  qk-gain {qk_gain(model):.2f}",
                  flush=True)
        if time.time() - t_ckpt > 60 * a.ckpt_minutes and step < total:
            save_checkpoint(a.ckpt, model, opt, step, plan, elapsed, a)
            t_ckpt = time.time()
        if a.stop_after and step - first_step >= a.stop_after and step < total:
            print(f"stopping after {a.stop_after} steps as asked (--stop-after)", flush=True)
            return step, True
        if elapsed > hard_s and step < total:
            print(f"warning: hard time limit {hard_s / 60:.0f} min reached at step {step}/{total}; "
                  f"stopping early (resume with --resume to finish the plan)", flush=True)
            return step, True
    return step, False


def main(argv=None):
    a = parse_args(argv)
    torch.set_num_threads(a.threads)
    torch.set_flush_denormal(True)  # the circuit's shut neurons and heads underflow: keep that fast
    t_start = time.time()
    resume = load_resume(a)
    model, frozen = init_model(a, resume)

    phases = parse_pairs(a.phases, float)
    longest = max(L for L, _ in (parse_pairs(a.plan, int) if a.plan else phases))
    train_samples, val = load_data(a, longest)
    plan = step_plan(a, model, phases, resume, t_start, len(val))
    pools = [PhasePool(train_samples, L, i, a.seed) for i, (L, _, _) in enumerate(plan)]
    total = sum(n for _, n, _ in plan)
    warmup = a.warmup if a.warmup is not None else max(20, int(0.03 * total))
    print_plan(a, plan, pools, warmup, len(val), longest)

    opt = make_optimizer(model, a)
    step, elapsed0 = 0, 0.0
    if resume:
        model.load_state_dict(resume["model"])
        opt.load_state_dict(resume["optimizer"])
        step, elapsed0 = resume["step"], resume["elapsed"]
    frozen_values = [(p, m, p.detach()[m].clone()) for p, m in frozen]
    step, stopped_early = train_loop(a, model, opt, frozen_values, plan, pools, val, warmup, step,
                                     elapsed0, t_start)

    if val and not stopped_early:
        print(layer_table(model, val), flush=True)
    elapsed = elapsed0 + time.time() - t_start
    save_checkpoint(a.ckpt, model, opt, step, plan, elapsed, a)
    size = export_model(model, a.out, {"step": str(step), "plan": plan_text_of(plan), "seed": str(a.seed),
                                       "complete": str(not stopped_early).lower()}, a.export_dtype)
    print(f"exported {a.out} (model.safetensors {size / 1e6:.2f} MB) after {step} steps, "
          f"{fmt_time(elapsed)}; checkpoint {a.ckpt}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
