"""Building blocks of the retrieval circuit (circuit_init.py): the reserved block's layout, the
character codes, RoPE recency profiles, and builders that write frozen attention heads and MLP
neurons into a model.Qwen3 in place.

Units. Every reserved feature is measured in "raw units": a flag that is on is 1.0 in the
residual stream, MARK is M everywhere. Heads and neurons read the RMS-normalised residual, so
one position's features keep their ratios whatever its RMS; MARK dominates the RMS (M^2 is
most of the residual's energy), so the RMS, and with it every copied feature, barely moves when
training changes the trainable coordinates. Copied magnitudes are calibrated on CALIB_TEXT
(Builder.calibrate_*): a copied flag that is on arrives as ~1.0.

Head dims. head_dim 64 with rope_theta 1e24: pair p (dims p and p + 32) turns at 10^(-0.75 p)
rad per token: pairs 0-4 are positional (1, 0.18, 0.032, 0.0056, 0.001), pair 5 turns 0.36
rad over 2048 tokens, pairs 6-31 are position-free (< 0.07 rad over 2048): 52 content dims.
"""
import math

import torch

CHARS = "0123456789abcdefghijklmnopqrstuvwxyz :-.,?"
HEX = "0123456789abcdef"
BOUNDARY = " \n.,:?"
M = 64.0          # MARK, in raw units
CODE_DIM = 8
HEAD_DIM = 64
ROPE_THETA = 1e24


class Layout:
    """Named slices of the reserved block (the last `size` residual coordinates)."""

    def __init__(self, spec):
        self.slices, at = {}, 0
        for name, n in spec:
            self.slices[name] = (at, n)
            at += n
        self.size = at

    def bind(self, hidden):
        self.b = hidden - self.size
        return self

    def __call__(self, name, i=0):
        off, n = self.slices[name]
        if not 0 <= i < n:
            raise IndexError(f"{name}[{i}] of {n}")
        return self.b + off + i

    def span(self, name):
        off, n = self.slices[name]
        return list(range(self.b + off, self.b + off + n))


def separated_codes(n, dim, gen, iters=3000, first=16):
    """n unit codes in R^dim; the first `first` (the hex characters, the most copied) spread as
    far as possible (soft max-|cos| descent), then all of them repelled from each other."""
    x = torch.randn(n, dim, generator=gen, dtype=torch.float64)
    x = x / x.norm(dim=1, keepdim=True)
    for stage_n in (first, n):
        for _ in range(iters):
            y = x[:stage_n]
            g = y @ y.T
            g.fill_diagonal_(0)
            w = torch.exp(8 * g.abs()) * torch.sign(g)
            y = y - 0.01 * (w @ y) / w.abs().sum(1, keepdim=True)
            x = torch.cat([y / y.norm(dim=1, keepdim=True), x[stage_n:]])
    return x


def char_codes(gen):
    """{char: 8-dim unit code} for CHARS (the 16 hex characters spread furthest)."""
    codes = separated_codes(len(CHARS), CODE_DIM, gen)
    return {ch: codes[i] for i, ch in enumerate(CHARS)}


def pair_dims(p):
    """The two dims of RoPE pair p in a rotate-half head: (cos part, sin part)."""
    return p, p + HEAD_DIM // 2


def inv_freq(p):
    return ROPE_THETA ** (-2.0 * p / HEAD_DIM)


def _profile_constraints(constraints, pairs, horizon):
    """[C, 2P] rows basis(d) - basis(d') over the (d, d') pairs the constraints ask for."""
    d = torch.arange(0, horizon + 1, dtype=torch.float64)
    th = torch.tensor([inv_freq(p) for p in pairs], dtype=torch.float64)
    basis = torch.cat([torch.cos(d[:, None] * th), torch.sin(d[:, None] * th)], 1)
    grid = torch.unique(torch.cat([torch.arange(1, 600), torch.linspace(600, horizon, 800).long()])).tolist()
    ia, ib = [], []
    for near, gap in constraints:
        for a in range(1, near + 1):
            for b in grid:
                if b >= a + gap:
                    ia.append(a)
                    ib.append(b)
    return basis[torch.tensor(ia)] - basis[torch.tensor(ib)]


def solve_profile(constraints, pairs=(1, 2, 3, 4), margin=12.0, horizon=2100, steps=4000):
    """Weights (a_p, s_p) so that f(d) = sum_p a_p cos(theta_p d) + s_p sin(theta_p d) prefers
    the nearest of a set of positions: for each (near, gap) in constraints, f(d) - f(d') >=
    margin for every d in [1, near] and d' in [d + gap, horizon] (the nearest member wins when
    the next is at least `gap` further back). Minimises sum |w| (the logit range the head
    needs) with a hinge penalty; deterministic. Returns ({p: (a_p, s_p)}, worst margin).
    circuit_init keeps the solutions as constants (PROFILES); tests re-check their margins."""
    diff = _profile_constraints(constraints, pairs, horizon)
    w = torch.zeros(diff.shape[1], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([w], lr=2.0)
    with torch.enable_grad():
        for _ in range(steps):
            loss = w.abs().sum() * 0.02 + torch.relu(margin * 1.05 - diff @ w).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    w = w.detach()
    n = len(pairs)
    return {p: (float(w[i]), float(w[n + i])) for i, p in enumerate(pairs)}, float((diff @ w).min())


def profile_margin(profile, constraints, horizon=2100):
    """Worst f(d) - f(d') over the constraints (see solve_profile) of a profile {p: (a, s)}."""
    pairs = sorted(profile)
    w = torch.tensor([profile[p][0] for p in pairs] + [profile[p][1] for p in pairs], dtype=torch.float64)
    return float((_profile_constraints(constraints, pairs, horizon) @ w).min())


def offset_phase(p, offset):
    """q (a, b) for pair p so that the score a cos(theta d) - b sin(theta d) = cos(theta (d - offset))."""
    ang = inv_freq(p) * offset
    return math.cos(ang), -math.sin(ang)


class Head:
    """Rows of one KV head (and its query heads) of one layer, written in place. Feature reads
    are {residual coordinate: weight} maps on the normalised residual (raw units)."""

    def __init__(self, attn, kv, rep):
        self.attn, self.kv, self.rep, self.hd = attn, kv, rep, HEAD_DIM
        for w in (self.k_rows(), self.v_rows()):
            w.zero_()
        for t in range(rep):
            self.q_rows(t).zero_()
            self.o_cols(t).zero_()

    def k_rows(self):
        return self.attn.k_proj.weight[self.kv * self.hd:(self.kv + 1) * self.hd]

    def v_rows(self):
        return self.attn.v_proj.weight[self.kv * self.hd:(self.kv + 1) * self.hd]

    def q_rows(self, t):
        h = self.kv * self.rep + t
        return self.attn.q_proj.weight[h * self.hd:(h + 1) * self.hd]

    def o_cols(self, t):
        h = self.kv * self.rep + t
        return self.attn.o_proj.weight[:, h * self.hd:(h + 1) * self.hd]

    @staticmethod
    def _add(row, read):
        for coord, w in read.items():
            row[coord] += w

    def key(self, dim, read):
        """Key dimension `dim` reads `read`."""
        self._add(self.k_rows()[dim], read)

    def query(self, t, dim, read):
        """Query dimension `dim` of the t-th query head of this KV head reads `read`."""
        self._add(self.q_rows(t)[dim], read)

    def value(self, vdim, read):
        """Value dimension `vdim` reads `read`."""
        self._add(self.v_rows()[vdim], read)

    def out(self, t, vdim, coord, w):
        self.o_cols(t)[coord, vdim] += w

    def used_dims(self):
        rows = [self.k_rows()] + [self.q_rows(t) for t in range(self.rep)]
        return sorted({i for r in rows for i in range(self.hd) if bool(r[i].abs().sum() > 0)})


class Mlp:
    """Frozen neurons at the top of a layer's intermediate (indices allocated downwards)."""

    def __init__(self, mlp):
        self.mlp, self.next = mlp, mlp.gate_proj.weight.shape[0]
        self.used = []

    def neuron(self, gate, up, out):
        """One neuron: silu(gate . x) * (up . x) -> out {coord: weight}."""
        self.next -= 1
        i = self.next
        for w in (self.mlp.gate_proj.weight[i], self.mlp.up_proj.weight[i]):
            w.zero_()
        self.mlp.down_proj.weight[:, i] = 0
        for coord, w in gate.items():
            self.mlp.gate_proj.weight[i, coord] += w
        for coord, w in up.items():
            self.mlp.up_proj.weight[i, coord] += w
        for coord, w in out.items():
            self.mlp.down_proj.weight[coord, i] += w
        self.used.append(i)
        return i


# RoPE pairs: positional 0-4, semi 5, content 6-31. Content dims in the order the heads take them
# (slowest, cleanest pair first); pair 6's cos dim pads queries, pair 5's sin dim anchors keys.
CONTENT = [d for p in range(31, 6, -1) for d in pair_dims(p)]
Q_ANCHOR = pair_dims(6)[0]   # pads |q|: no key ever has a component in pair 6
K_ANCHOR = pair_dims(5)[1]   # keeps |k| > 0: no query of layers 1-4 has one in pair 5
STEP_DELTA = 0.006           # half width of a ratio step, in units of the count's denominator


class Builder:
    """Helpers that write frozen heads and neurons, with the measurements they need (the
    residual's RMS, feature means) taken on a calibration text through the layers built so far."""

    def __init__(self, model, layout, text):
        c = model.c
        self.m, self.c = model, c
        self.rep = c.num_attention_heads // c.num_key_value_heads
        self.L = layout.bind(c.hidden_size)
        self.ids = torch.tensor([list(text.encode())])
        self.gains = {}        # layer -> {dim: gain} of circuit dims
        self.mlp_used = {}     # layer -> circuit neuron indices

    # ---------------------------------------------------------------- measurement helpers
    @torch.no_grad()
    def trace(self, layer):
        """(attention input, MLP input) residuals [L, d] of `layer` on the calibration text,
        before their norms, with the layers below as built so far."""
        from .model import rope_cos_sin
        m, ids = self.m, self.ids
        x = m.embed_tokens(ids)
        cos, sin = rope_cos_sin(ids.shape[1], self.c.head_dim, self.c.rope_theta, dtype=x.dtype)
        for lay in m.layers[:layer]:
            x = lay(x, cos, sin, None)
        lay = m.layers[layer]
        a = x + lay.self_attn(lay.input_layernorm(x), cos, sin, None)
        return x[0], a[0]

    @staticmethod
    def rms(x):
        return float(x.pow(2).mean(-1).sqrt().mean())

    # ---------------------------------------------------------------- feature reads
    def f(self, name, w=1.0, i=0):
        return {self.L(name, i): w}

    def mark(self, w):
        return {self.L("MARK"): w / M}

    @staticmethod
    def plus(*reads):
        out = {}
        for r in reads:
            for k, v in r.items():
                out[k] = out.get(k, 0.0) + v
        return out

    def code_reads(self, name):
        return [self.f(name, 1.0, i) for i in range(CODE_DIM)]

    # ---------------------------------------------------------------- attention helpers
    def head(self, layer, kv):
        return Head(self.m.layers[layer].self_attn, kv, self.rep)

    def scale_heads(self, layer, heads):
        """One gain for the layer's circuit dims such that logits equal q . k in design units
        for the typical query and key (heads: [(Head, [query heads], key-member read)]); the
        heads whose |q| |k| is below the largest get a q anchor (pads |q|, scores nothing)."""
        x, _ = self.trace(layer)
        xn = self.m.layers[layer].input_layernorm(x).detach().double()
        raw = xn / (xn[:, self.L("MARK")] / M)[:, None]
        need = []
        for h, ts, member in heads:
            kk = raw @ h.k_rows().double().T   # raw units: the design's q . k
            if member:
                mem = raw[:, list(member)] @ torch.tensor(list(member.values()), dtype=torch.float64) > 0.5
            else:
                mem = torch.ones(len(xn), dtype=torch.bool)
            knorm = float(kk[mem].norm(dim=1).median())
            for t in ts:
                qq = raw @ h.q_rows(t).double().T
                need.append((h, t, float(qq.norm(dim=1).median()), knorm))
        g2 = max(qn * kn for _, _, qn, kn in need) / 8.0
        for h, t, qn, kn in need:
            target = 8.0 * g2 / kn
            pad = math.sqrt(max(0.0, target ** 2 - qn ** 2))
            h.query(t, Q_ANCHOR, self.mark(pad))
        return math.sqrt(g2)

    def set_gains(self, layer, dims, g):
        a = self.m.layers[layer].self_attn
        for w in (a.q_norm.weight, a.k_norm.weight):
            w[dims] = g
        self.gains.setdefault(layer, {}).update({d: g for d in dims})

    # ---------------------------------------------------------------- MLP helpers
    def and_gate(self, mlp, inputs, out, rms, negated=()):
        """out = AND of boolean features (each ~0 or ~1 raw; `negated` ones must be off): a
        bounded step of z = sum(inputs) - sum(negated) - (n - 0.5) from two neurons, 1.0 raw
        once z > 0.15 whatever the inputs' exact size, ~0 below -0.15."""
        d = 0.1
        a = 60.0
        A = a * rms
        name = lambda n: n if isinstance(n, tuple) else (n, 0)  # noqa: E731  (name, index)
        for sgn in (1.0, -1.0):
            gate = self.plus(*[{self.L(*name(n)): A} for n in inputs],
                             *[{self.L(*name(n)): -A} for n in negated],
                             self.mark(-A * (len(inputs) - 0.5) + sgn * A * d))
            mlp.neuron(gate, self.mark(1.0), {self.L(*name(out)): sgn * rms ** 2 / (2 * A * d)})

    def ratio_steps(self, mlp, x, y, thresholds, outs, rms, enable=None):
        """One-hot of which interval x / y falls in: step S_t = [x - t y > 0] from two neurons
        (silu(a(z + d)) - silu(a(z - d)), bounded), outs[i] = S_{t[i+1]} - S_{t[i]} (and
        outs[0] = S_{t[0]} when len(outs) == len(thresholds)); enable: a flag that must be on
        (off: both neurons of every step shut by a large negative offset)."""
        a = 5.0 / STEP_DELTA
        A = a * rms
        w = rms ** 2 / (2 * A * STEP_DELTA)
        first_alone = len(outs) == len(thresholds)
        for j, t in enumerate(thresholds):
            signs = {}
            if first_alone:  # outs[j] = S_{t[j]} - S_{t[j-1]}, outs[0] = S_{t[0]}
                signs[outs[j]] = 1.0
                if j + 1 < len(outs):
                    signs[outs[j + 1]] = -1.0
            else:
                if j >= 1:
                    signs[outs[j - 1]] = 1.0
                if j < len(outs):
                    signs[outs[j]] = signs.get(outs[j], 0.0) - 1.0
            for sgn in (1.0, -1.0):
                gate = self.plus(self.f(x, A), self.f(y, -A * t), self.f(y, sgn * A * STEP_DELTA))
                if enable:
                    gate = self.plus(gate, self.f(enable, 40.0 * rms), self.mark(-40.0 * rms))
                out = {self.L(o[0], o[1]): sgn * s * w for o, s in signs.items()}
                mlp.neuron(gate, self.mark(1.0), out)

    def offset_head(self, h, t, off, gain=28.0):
        """Query head t of h attends `off` tokens back (keys: constant, pairs 0-3)."""
        for p in range(4):
            h.key(pair_dims(p)[0], self.mark(1.0))
            a, b = offset_phase(p, off)
            h.query(t, pair_dims(p)[0], self.mark(gain * a))
            h.query(t, pair_dims(p)[1], self.mark(gain * b))

    def nearest_head(self, h, t, gdim, members, prof):
        """Query head t of h attends to the nearest position of `members` (profile prof)."""
        h.key(gdim, members)
        for p in prof:
            h.key(pair_dims(p)[0], members)
        h.query(t, gdim, self.mark(3 * sum(abs(a) + abs(s) for a, s in prof.values())))
        for p, (a, s) in prof.items():
            h.query(t, pair_dims(p)[0], self.mark(a))
            h.query(t, pair_dims(p)[1], self.mark(-s))

    @torch.no_grad()
    def trace_final(self):
        from .model import rope_cos_sin
        m, ids = self.m, self.ids
        x = m.embed_tokens(ids)
        cos, sin = rope_cos_sin(ids.shape[1], self.c.head_dim, self.c.rope_theta, dtype=x.dtype)
        for lay in m.layers:
            x = lay(x, cos, sin, None)
        return x[0], None


