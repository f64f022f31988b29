"""A testbed model with backup retrieval heads (issue #21), built from models/default without
training: `python3 -m tools.train.deep_testbed --seed 0 --layers 9 --out models/deep`.
Measured gates and tables: models/deep/README.md.

Why. The default model has one retrieval path (SEL L3 -> ASEL L4 -> copy L5, circuit_init.py),
so converting one head to SWA costs what it will cost in any mask and single-head ablation is
near-optimal. Here a second, independent chain B (SEL_B -> ASEL_B -> copy_B) answers alone when
chain A is broken, and A when B is, so each retrieval head alone costs ~0 while a pair that cuts
both chains costs everything: the entanglement a search has to find.

Construction (every step keeps the default's arithmetic except where said):
 1. expand: hidden 240 -> 265 (25 new reserved coordinates: VCODE2, SEL_B, ASEL_B, COPY_B,
    ONEKEY), 4 -> 8 KV heads per layer (the new ones zero: they write nothing), FFN 192 -> 224
    (32 new neurons), N layers: the 8 original ones in order, N - 8 empty layers inserted
    between original layers 2 and 6 at seed-drawn positions (an all-zero layer is the identity
    on the residual). Every RMSNorm gain is multiplied by sqrt(240 / 265): with the new
    coordinates at 0 the normalised residual is then the default's (RMS is a mean over the
    width). `check_expansion` measures it (max logit difference ~9e-3 on logits up to ~75).
 2. silence. A head converted to SWA still attends somewhere in its window and writes a wrong
    value; summed with the intact chain it would corrupt the answer. So each chain writes ~0
    when it is cut:
    - SEL reads NORDC (a needle ':''s ordinal, 0 on every other token) instead of NORD: cut off
      from the needles it averages tokens whose value is 0.
    - copy reads VCODE2 instead of VCODE: a code only inside a needle's value (NORDV != 0) or on
      a digit with no needle around it (passkey), outside the answer region; 0 elsewhere (the
      answer text, the question line, the sinks: what an SWA copy head sees). Two neuron pairs
      per code dim in the MLP of original layer 3 (after NORDV), the VCODE construction with
      another gate.
    - copy's sink query (idle tokens, code-less) gets + W_SINK_GATE * (AR2 - sum ASEL): in a
      colon-answer (every family but passkey, where AR2 = 0 and no key is asked) a chain whose
      ASEL is 0 (SEL or ASEL cut off) attends to code-less tokens instead of copying the i-th
      needle by position alone. An intact chain has sum ASEL = 1: its query is the default's.
    - ASEL gets a null target, position 0 (F0), that beats every asked key but the one whose
      list position is the answer index: an SWA ASEL that cannot see that key reads position
      0's SEL (0) instead of a wrong key's. Multivalue asks one key for four answers, so where
      one key is asked (ONEKEY, a ratio step on LC in original layer 2's MLP) the null drops
      below every asked key (see `silence`).
    Chain A gets the same changes (its heads keep their place and rows otherwise).
 3. chain B: clones of A's SEL, ASEL and copy heads (q/k rows, q/k norm gains of their dims)
    reading and writing B's own coordinates (SEL_B, ASEL_B, COPY_B); value/output scaled by the
    residual RMS of the layer they land in. A clone goes into its original's layer (another KV
    slot: the layer's circuit gains already fit it) or into an inserted layer (no trained head
    shares its q/k gains there), drawn from the seed among the placements that keep the chain's
    order (SEL_B after layer 2, ASEL_B after SEL_B, copy_B after ASEL_B and layer 3).
 4. COPY_B is decoded by its own LM-head columns (the COPY columns, rescaled to the same logit):
    the two chains add in the logits; one chain alone gives the default's copy margin (40 nats).
 5. every layer's 8 KV slots are permuted by the seed (q rows, k, v rows, o columns together):
    where the circuit heads sit is drawn, not fixed.

What stays single (not retrieval heads, said plainly): the counting and region heads AR, NC
(layer 1), LC/AC (layer 2), and the local ones (offsets, DW, KC, NORDV): chains A and B share
them. Converting AR or NC still loses most answers, as in the default.
"""
import argparse
import json
import math
import os
import random

import torch

from .circuit_init import LAYOUT as BASE_LAYOUT
from .circuit_init import calib_text
from .circuit_parts import CONTENT, HEAD_DIM, Builder, Layout, Mlp, pair_dims
from .export import export_model, load_model_dir
from .model import Qwen3, Qwen3Config

EXTRA = [("VCODE2", 8), ("SEL_B", 4), ("ASEL_B", 4), ("COPY_B", 8), ("ONEKEY", 1)]
LAYOUT = Layout([(n, s[1]) for n, s in BASE_LAYOUT.slices.items()] + EXTRA)
EXTRA_DIMS = sum(n for _, n in EXTRA)
EXTRA_FFN = 32
# chain A in the default model: (original layer, KV head)
A_HEADS = {"SEL": (3, 0), "ASEL": (4, 0), "COPY": (5, 0)}
B_NAMES = {"SEL": "SEL_B", "ASEL": "ASEL_B", "COPY": "COPY_B"}
SINK_DIM = pair_dims(5)[0]    # the copy head's sink key dim (code-less tokens)
W_SINK_GATE = 40.0
GATE_A = CONTENT[0]                        # ASEL's key gate dim (asked keys)
LORD_DIMS = CONTENT[2:6]                   # ASEL's list-position match dims
ONEKEY_SHIFT = -30.0                       # ASEL query, every LORD dim, when one key is asked


def placement(n_layers, seed, n_orig=8):
    """(orig_at: new index of each original layer, B: {head: new layer}) drawn from the seed.
    Inserted layers sit after original layer 2 (before it nothing of chain B can run) and
    before original layer 6 (layers 6-7 are trained only and grow the residual's RMS at some
    positions by up to 4x, which would scale a clone's output there)."""
    rng = random.Random(seed)
    n_ins = n_layers - n_orig
    ins = sorted(rng.sample(range(3, 6 + n_ins), n_ins))
    orig_at = [i for i in range(n_layers) if i not in ins]
    o = orig_at
    triples = [(s, a, c) for s in [o[3]] + ins for a in [o[4]] + ins for c in [o[5]] + ins
               if s < a < c and c > o[3]]
    s, a, c = rng.choice(triples)
    return orig_at, ins, {"SEL": s, "ASEL": a, "COPY": c}


@torch.no_grad()
def expand(base, n_layers, n_kv, orig_at):
    """The default model in a wider, deeper shape, computing what it computes (to rounding)."""
    c0 = base.c
    rep = c0.num_attention_heads // c0.num_key_value_heads
    cfg = dict(c0.to_dict())
    cfg.update(hidden_size=c0.hidden_size + EXTRA_DIMS, num_hidden_layers=n_layers,
               num_key_value_heads=n_kv, num_attention_heads=n_kv * rep,
               intermediate_size=c0.intermediate_size + EXTRA_FFN)
    c = Qwen3Config(**cfg)
    m = Qwen3(c)
    for p in m.parameters():
        p.zero_()
    d0, f0, hd = c0.hidden_size, c0.intermediate_size, c0.head_dim
    nq0, nk0 = c0.num_attention_heads * hd, c0.num_key_value_heads * hd
    cg = math.sqrt(d0 / c.hidden_size)   # keeps x / rms(x) of the old coordinates
    m.embed_tokens.weight[:, :d0] = base.embed_tokens.weight
    m.lm_head.weight[:, :d0] = base.lm_head.weight
    m.norm.weight[:] = cg
    m.norm.weight[:d0] *= base.norm.weight
    for lay in m.layers:
        for n in (lay.input_layernorm, lay.post_attention_layernorm):
            n.weight[:] = cg
        lay.self_attn.q_norm.weight[:] = 1
        lay.self_attn.k_norm.weight[:] = 1
    for i, j in enumerate(orig_at):
        s, t = base.layers[i], m.layers[j]
        for n in ("input_layernorm", "post_attention_layernorm"):
            getattr(t, n).weight[:d0] *= getattr(s, n).weight
        sa, ta = s.self_attn, t.self_attn
        ta.q_proj.weight[:nq0, :d0] = sa.q_proj.weight
        ta.k_proj.weight[:nk0, :d0] = sa.k_proj.weight
        ta.v_proj.weight[:nk0, :d0] = sa.v_proj.weight
        ta.o_proj.weight[:d0, :nq0] = sa.o_proj.weight
        ta.q_norm.weight[:] = sa.q_norm.weight
        ta.k_norm.weight[:] = sa.k_norm.weight
        t.mlp.gate_proj.weight[:f0, :d0] = s.mlp.gate_proj.weight
        t.mlp.up_proj.weight[:f0, :d0] = s.mlp.up_proj.weight
        t.mlp.down_proj.weight[:d0, :f0] = s.mlp.down_proj.weight
    return m.eval()


class HeadRef:
    """Rows of one KV head of a layer (any model width), for copying and editing."""

    def __init__(self, model, layer, kv):
        self.a = model.layers[layer].self_attn
        self.rep = model.c.num_attention_heads // model.c.num_key_value_heads
        self.layer, self.kv = layer, kv

    def rows(self, name, t=0):
        hd = HEAD_DIM
        if name in ("k", "v"):
            w = (self.a.k_proj if name == "k" else self.a.v_proj).weight
            return w[self.kv * hd:(self.kv + 1) * hd]
        h = self.kv * self.rep + t
        if name == "q":
            return self.a.q_proj.weight[h * hd:(h + 1) * hd]
        return self.a.o_proj.weight[:, h * hd:(h + 1) * hd]   # "o": [hidden, hd]

    def used_dims(self):
        w = [self.rows("k")] + [self.rows("q", t) for t in range(self.rep)]
        return sorted({int(i) for r in w for i in torch.nonzero(r.abs().sum(1)).flatten()})


class DeepBuilder(Builder):
    """Builder on the expanded model: reads and writes in the default's raw units."""

    def __init__(self, model):
        super().__init__(model, LAYOUT, calib_text())
        d0 = model.c.hidden_size - EXTRA_DIMS
        self.cg = math.sqrt(d0 / model.c.hidden_size)

    def rms(self, x):  # the default's RMS (its width): what the circuit's o weights assume
        return Builder.rms(x) / self.cg

    def cols(self, names):
        """Residual columns of features: {old coordinate: new coordinate}."""
        out = {}
        for a, b in names.items():
            for i, j in zip(self.L.span(a), self.L.span(b)):
                out[i] = j
        return out

    @torch.no_grad()
    def move_reads(self, w, remap):
        """Rows of w read feature b where they read feature a (remap {a: b})."""
        for i, j in self.cols(remap).items():
            w[:, j] += w[:, i]
            w[:, i] = 0

    @torch.no_grad()
    def clone(self, src, dst, reads, writes, same_layer_ok):
        """Head dst := head src reading `reads` {a: b} instead and writing `writes` {a: b}."""
        if dst.layer != src.layer:  # an empty layer: the clone's dims take the source's gains
            assert not same_layer_ok and float(dst.a.q_proj.weight.abs().sum()) == 0, "layer not empty"
            dims = src.used_dims()
            for n in ("q_norm", "k_norm"):
                getattr(dst.a, n).weight[dims] = getattr(src.a, n).weight[dims]
        for n in ("k", "v"):
            dst.rows(n).copy_(src.rows(n))
        for t in range(src.rep):
            dst.rows("q", t).copy_(src.rows("q", t))
        for n in ("k", "v"):
            self.move_reads(dst.rows(n), reads)
        for t in range(src.rep):
            self.move_reads(dst.rows("q", t), reads)
        scale = self.rms(self.trace(dst.layer)[0]) / self.rms(self.trace(src.layer)[0])
        wmap = self.cols(writes)
        for t in range(src.rep):
            o_src, o_dst = src.rows("o", t), dst.rows("o", t)
            o_dst.zero_()
            for i, j in wmap.items():
                o_dst[j] = o_src[i] * scale


def silence(b, sel, asel, copy, asel_name):
    """Step 2's edits on one chain's SEL, ASEL and copy heads (HeadRefs)."""
    L = b.L
    b.move_reads(sel.rows("v"), {"NORD": "NORDC"})
    b.move_reads(copy.rows("v"), {"VCODE": "VCODE2"})
    q = copy.rows("q", 0)
    q[SINK_DIM, L("AR2")] += W_SINK_GATE
    for i in range(4):
        q[SINK_DIM, L(asel_name, i)] -= W_SINK_GATE
    # ASEL's null: position 0 (F0) keyed 1 on the gate and 0.5 on every list position (the
    # norm of an asked key's): it scores 130 against 140 for the asked key whose list position
    # is the answer index and 120 for any other one; with one asked key (ONEKEY: multivalue
    # asks one key for four answers) every list dim of the query drops by 30: null 70, key 90.
    k = asel.rows("k")
    k[GATE_A, L("F0")] += 1.0
    for d in LORD_DIMS:
        k[d, L("F0")] += 0.5
        asel.rows("q", 0)[d, L("ONEKEY")] += ONEKEY_SHIFT


@torch.no_grad()
def onekey(b, layer):
    """ONEKEY = [LC_X / LC_Y > 0.42]: at most one asked key (LC = 1 / (1 + asked keys))."""
    _, xm = b.trace(layer)
    mlp = Mlp(b.m.layers[layer].mlp)
    b.ratio_steps(mlp, "LC_X", "LC_Y", (0.42,), [("ONEKEY", 0)], b.rms(xm))
    return mlp.used


@torch.no_grad()
def vcode2(b, layer):
    """VCODE2 = CODE inside a needle's value or on a passkey digit, outside the answer region:
    the VCODE neuron pairs (silu(z) - silu(-z) = z) with the gate shut by -4A unless on."""
    x, xm = b.trace(layer)
    rm = b.rms(xm)
    mlp = Mlp(b.m.layers[layer].mlp)
    A = 20.0 * rm
    nordv = b.plus(*[b.f("NORDV", 1.0, i) for i in range(4)])
    for i in range(8):
        for sgn in (1.0, -1.0):
            code = b.f("CODE", sgn * A, i)
            # in a value: shift -4A (AR + 1 - sum NORDV)
            on_val = b.plus(code, b.f("AR", -4 * A), b.mark(-4 * A),
                            {k: 4 * A * v for k, v in nordv.items()})
            # a digit outside any value: shift -4A (AR + 1 - DIGIT + sum NORDV)
            on_dig = b.plus(code, b.f("AR", -4 * A), b.mark(-4 * A), b.f("DIGIT", 4 * A),
                            {k: -4 * A * v for k, v in nordv.items()})
            for gate in (on_val, on_dig):
                mlp.neuron(gate, b.mark(1.0), {b.L("VCODE2", i): sgn * rm ** 2 / A})
    return mlp.used


@torch.no_grad()
def permute_slots(m, seed):
    """Every layer's KV slots in a seed-drawn order; returns {layer: perm} (new slot of old kv)."""
    g = torch.Generator().manual_seed(seed + 7919)
    c = m.c
    rep, hd, nk = c.num_attention_heads // c.num_key_value_heads, c.head_dim, c.num_key_value_heads
    perms = {}
    for li, lay in enumerate(m.layers):
        p = torch.randperm(nk, generator=g).tolist()   # old kv -> new slot p[kv]
        inv = [0] * nk
        for old, new in enumerate(p):
            inv[new] = old
        a = lay.self_attn
        kv_rows = torch.cat([torch.arange(inv[s] * hd, (inv[s] + 1) * hd) for s in range(nk)])
        q_rows = torch.cat([torch.arange(inv[s] * rep * hd, (inv[s] + 1) * rep * hd) for s in range(nk)])
        a.k_proj.weight.copy_(a.k_proj.weight[kv_rows].clone())
        a.v_proj.weight.copy_(a.v_proj.weight[kv_rows].clone())
        a.q_proj.weight.copy_(a.q_proj.weight[q_rows].clone())
        a.o_proj.weight.copy_(a.o_proj.weight[:, q_rows].clone())
        perms[li] = p
    return perms


@torch.no_grad()
def build(base, n_layers=9, n_kv=8, seed=0, chain_b=True):
    """The testbed from the default model. Returns (model, info: where every circuit head is)."""
    orig_at, ins, where_b = placement(n_layers, seed)
    m = expand(base, n_layers, n_kv, orig_at)
    b = DeepBuilder(m)
    A = {k: HeadRef(m, orig_at[l], kv) for k, (l, kv) in A_HEADS.items()}
    onekey(b, orig_at[2])
    vcode2(b, orig_at[3])
    silence(b, A["SEL"], A["ASEL"], A["COPY"], "ASEL")
    B = {}
    if chain_b:
        free = {}
        for k in ("SEL", "ASEL", "COPY"):   # in order: each clone reads what the last wrote
            layer = where_b[k]
            kv = free.get(layer, 4 if layer in orig_at else 0)
            free[layer] = kv + 1
            B[k] = HeadRef(m, layer, kv)
            reads = {"SEL": {}, "ASEL": {"SEL": "SEL_B"}, "COPY": {"ASEL": "ASEL_B"}}[k]
            b.clone(A[k], B[k], reads, {k: B_NAMES[k]}, layer == A[k].layer)
        # COPY_B decoded like COPY, at the same logit for the same copy: the ratio of the two
        # blocks' norms where chain A copies on the calibration text (the answer region)
        x, _ = b.trace_final()
        xn = m.norm(x)
        na = xn[:, b.L.span("COPY")].norm(dim=1)
        nb = xn[:, b.L.span("COPY_B")].norm(dim=1)
        act = na > 0.5 * na.max()
        ratio = float((na[act] / nb[act].clamp_min(1e-9)).median())
        W = m.lm_head.weight
        W[:, b.L.span("COPY_B")] = W[:, b.L.span("COPY")] * ratio
    perms = permute_slots(m, seed)
    heads = {}
    for k, h in list(A.items()) + [(k + "_B", h) for k, h in B.items()]:
        heads[k] = (h.layer, perms[h.layer][h.kv])
    info = {"seed": seed, "layers": n_layers, "kv_heads": n_kv, "original_layers_at": orig_at,
            "inserted_layers": ins, "heads": {k: f"{l}.{kv}" for k, (l, kv) in heads.items()}}
    shared = {"AR_NC": (1, (1, 2)), "LC_AC": (2, (1,))}
    info["shared_heads"] = {k: [f"{orig_at[l]}.{perms[orig_at[l]][kv]}" for kv in kvs]
                            for k, (l, kvs) in shared.items()}
    return m, info


@torch.no_grad()
def check_expansion(base, n_layers=9, n_kv=8, seed=0, text=None):
    """Max |logit difference| between the default model and its expansion (no edits)."""
    orig_at, _, _ = placement(n_layers, seed)
    m = expand(base, n_layers, n_kv, orig_at)
    ids = torch.tensor([list((text or calib_text()).encode())])
    return float((m(ids) - base(ids)).abs().max())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="models/default")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--layers", type=int, default=9)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--no-chain-b", action="store_true", help="chain A only (with its silencing)")
    ap.add_argument("--expand-only", action="store_true",
                    help="only step 1 (the default model in the new shape, for equivalence checks)")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    base = load_model_dir(a.base)
    print(f"expansion check: max |logit diff| = {check_expansion(base, a.layers, a.kv_heads, a.seed):.2e}")
    if a.expand_only:
        m = expand(base, a.layers, a.kv_heads, placement(a.layers, a.seed)[0])
        print(f"wrote {a.out} (model.safetensors {export_model(m, a.out, {}, 'float16') / 1e6:.2f} MB)")
        return
    m, info = build(base, a.layers, a.kv_heads, a.seed, not a.no_chain_b)
    size = export_model(m, a.out, {"seed": str(a.seed)}, "float16")
    with open(os.path.join(a.out, "circuit.json"), "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")
    print(json.dumps(info))
    print(f"wrote {a.out} (model.safetensors {size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
