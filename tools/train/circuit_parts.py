"""Building blocks of the retrieval circuit (circuit_init.py): the reserved block's layout,
character codes, and a Builder that writes frozen heads into a model in place."""
import math

import torch

CHARS = "0123456789abcdefghijklmnopqrstuvwxyz :-.,?"
HEX = "0123456789abcdef"
CIRCUIT_DIMS = 83
# layout of the reserved block, relative to its start (hidden_size - CIRCUIT_DIMS)
COLON, COMMA, HEXB, OTHER = 0, 1, 2, 18  # embedding: ':' flag | ',' flag | hex one-hot (16) | code8
N_READ = 26                              # COLON..OTHER+8: what heads read of a character
C1, C2, C3, C5 = 26, 27, 28, 29          # "1/2/3/5 back is ':'"
CM1, CM2, CM3 = 30, 31, 32               # "1/2/3 back is ','"
P = (33, 41, 49)                         # 8-dim codes of the tokens 1, 2, 3 back
KN, KQ = 57, 62                          # 5-dim key signatures: a needle's / the asked one
PVP, QPV = 67, 72                        # 5-dim value-prefix signatures: previous needle's / last answer's
PVP1 = 77                                # PVP as found at a needle's o = 1, before the move to o = 5
MARK = 82                                # 1 in every embedding (offset heads' positional key)
SIG = 5
FLAG_SHARE, READ_SHARE = 0.5, 0.75 ** 0.5  # flagged rows: flag / code8 parts (squares sum to 1)
# Head dims below are named as in a head_dim-16 head (RoPE pair p = dims p and p + 8); a wider
# head keeps the same frequencies at pair p * head_dim / 16, so hd_dim() maps every name and
# the circuit behaves the same at head_dim 32 (the odd pairs are left to the trained heads).
OFFSET_PAIRS = (0, 1, 2, 3)            # RoPE pairs of the offset heads (fast: position selective)
CLEAN = (5, 6, 7, 13, 14, 15)          # dims of RoPE pairs 5-7: < 0.4 rad over 2048 positions
SLOW8 = (4, 5, 6, 7, 12, 13, 14, 15)   # pairs 4-7 (the induction votes' 8-dim codes)
RECENCY = 4                            # pair 4 (dims 4, 12): cos falls monotonically to 3141 tokens
ANCHOR_Q, ANCHOR_K = 0, 1              # dims a query / key anchor sits in (pair 0 / pair 1 cos)


def hd_dim(i, hd):
    """Dim `i` of a head_dim-16 head -> the dim of the same RoPE frequency in a head of `hd`."""
    if hd % 16:
        raise ValueError(f"head_dim {hd}: the circuit needs a multiple of 16")
    return (i % 8) * (hd // 16) + (i // 8) * (hd // 2)


def hd_dims(dims, hd):
    return [hd_dim(i, hd) for i in dims]


def gain_scale(hd):
    """q/k RMSNorm divides by sqrt(head_dim)-wide RMS and the logit by sqrt(head_dim): the same
    q, k entries in a wider head give logits sqrt(hd / 16) larger; gains times this undo it."""
    return (16.0 / hd) ** 0.25


def separated_codes(n, dim, gen, iters=400, lr=0.05, weight=None):
    """n unit vectors in R^dim with small pairwise |cos| (repulsion from a random start;
    weight [n, n] makes some pairs repel harder)."""
    x = torch.randn(n, dim, generator=gen, dtype=torch.float64)
    x = x / x.norm(dim=1, keepdim=True)
    for _ in range(iters):
        g = x @ x.T
        g.fill_diagonal_(0)
        if weight is not None:
            g = g * weight
        x = x - lr * (g @ x)
        x = x / x.norm(dim=1, keepdim=True)
    return x


def hex_first_codes(n, dim, gen, iters=3000):
    """n unit codes in R^dim whose first 16 (the hex characters, which the copy heads' matched
    filter must tell apart) are spread as far as possible (soft max-|cos| descent; max |cos|
    ~0.4 for 16 in 8 dims), then the others repelled from them and each other."""
    hexc = torch.randn(16, dim, generator=gen, dtype=torch.float64)
    hexc = hexc / hexc.norm(dim=1, keepdim=True)
    for _ in range(iters):
        g = hexc @ hexc.T
        g.fill_diagonal_(0)
        w = torch.exp(8 * g.abs()) * torch.sign(g)  # push hardest on the closest pairs
        hexc = hexc - 0.01 * (w @ hexc) / w.abs().sum(1, keepdim=True)
        hexc = hexc / hexc.norm(dim=1, keepdim=True)
    rest = separated_codes(n, dim, gen)[16:]
    for _ in range(400):
        x = torch.cat([hexc, rest])
        g = rest @ x.T
        g[:, 16:].fill_diagonal_(0)
        rest = rest - 0.05 * (g @ x)
        rest = rest / rest.norm(dim=1, keepdim=True)
    return torch.cat([hexc, rest])


def text_mean(code):
    """Mean code over the characters of TEXT (tokens outside CHARS count as zero codes): what a
    head that attends uniformly reads, subtracted so such a head writes ~0."""
    acc = torch.zeros(code.shape[1], dtype=torch.float64)
    for ch in TEXT:
        if ch in CHARS:
            acc += code[CHARS.index(ch)]
    return acc / len(TEXT)


def offset_phase(c, offset):
    """q and k rows [hd] for attention `offset` tokens back (phase on q, so the query heads of
    one KV head can use different offsets): q_p conj(k_p) = exp(-i theta_p offset)."""
    hd, half = c.head_dim, c.head_dim // 2
    inv_freq = 1.0 / (c.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    q, k = torch.zeros(hd, dtype=torch.float64), torch.zeros(hd, dtype=torch.float64)
    for p in hd_dims(OFFSET_PAIRS, hd):
        ang = float(inv_freq[p]) * offset
        q[p], q[p + half] = math.cos(ang), -math.sin(ang)
        k[p] = 1.0
    return q, k


class Builder:
    """Writes heads of a model in place; `b` is the first reserved coordinate."""

    def __init__(self, model, gen, code_norm):
        c = self.c = model.c
        self.m, self.hd = model, c.head_dim
        self.rep = c.num_attention_heads // c.num_key_value_heads
        self.d = c.hidden_size
        self.b = self.d - CIRCUIT_DIMS
        self.dt = model.embed_tokens.weight.dtype
        # 8-dim character codes, the 16 hex ones spread furthest: the copy heads' copies of
        # them are decoded from these 8 numbers by a matched filter
        self.code8 = hex_first_codes(len(CHARS), 8, gen)
        self.mu8 = text_mean(self.code8)
        # [5, 8] each: code8 -> signature of the key's last / second-to-last character
        self.sig = [torch.linalg.qr(torch.randn(8, SIG, generator=gen, dtype=torch.float64))[0].T * 1.2
                    for _ in range(2)]
        # [5, 24]: codes of three characters (P2, P1, P0 order) -> value-prefix signature
        self.psig = torch.linalg.qr(torch.randn(24, SIG, generator=gen, dtype=torch.float64))[0].T * 1.5
        self.code_norm = code_norm

    def at(self, name):
        return self.b + name

    def dim(self, i):
        """A head_dim-16 dim name -> this model's dim (hd_dim)."""
        return hd_dim(i, self.hd)

    def rows(self, w, i):
        return w[i * self.hd:(i + 1) * self.hd]

    def ocols(self, attn, h):
        return attn.o_proj.weight[:, h * self.hd:(h + 1) * self.hd]

    def embed(self):
        """Fixed character codes in the reserved columns and the marker. Every character has
        code8 * code_norm * READ_SHARE in OTHER (what heads read); ':' adds a COLON indicator
        and ',' a COMMA flag, hex characters a one-hot in HEXB (what the LM head decodes; layer
        0 cancels it in the residual so only the copy heads' writes reach the LM head)."""
        E = self.m.embed_tokens.weight
        E[:, self.b:] = 0
        E[:, self.at(MARK)] = 1.0
        for i, ch in enumerate(CHARS):
            t = ord(ch)
            if ch == ":":
                E[t, self.at(COLON)] = self.code_norm * FLAG_SHARE
            elif ch == ",":
                E[t, self.at(COMMA)] = self.code_norm * FLAG_SHARE
            elif ch in HEX:
                E[t, self.at(HEXB) + HEX.index(ch)] = self.code_norm * FLAG_SHARE
            E[t, self.at(OTHER):self.at(OTHER) + 8] = (self.code_norm * READ_SHARE * self.code8[i]).to(self.dt)

    def char_read(self):
        """[8, N_READ]: reserved columns COLON..OTHER -> code8 of the character * code_norm."""
        r = torch.zeros(8, N_READ, dtype=torch.float64)
        r[:, OTHER:OTHER + 8] = torch.eye(8, dtype=torch.float64) / READ_SHARE
        return r

    def flag_read(self, flag):
        """[1, N_READ]: reserved columns -> 1 for the flagged character (':' or ',')."""
        r = torch.zeros(1, N_READ, dtype=torch.float64)
        r[0, flag] = 1.0 / (self.code_norm * FLAG_SHARE)
        return r

    def offset_head(self, attn, kv, offsets, value_rows, outs, gates=None, anchor=2.0):
        """Query head kv*rep+t attends offsets[t] back. value_rows: {v row: [d] read}; outs[t]:
        list of (v rows, residual coordinates, scale). gates[t]: None (always offsets[t]) or a
        list of (residual coordinate of an indicator, offset): the query is the sum of the
        offsets' phases weighted by the indicators, plus an anchor that leaves attention near
        uniform where no indicator is on."""
        self.rows(attn.k_proj.weight, kv).zero_()
        self.rows(attn.v_proj.weight, kv).zero_()
        for r, read in value_rows.items():
            self.rows(attn.v_proj.weight, kv)[r] = read.to(self.dt)
        for t, off in enumerate(offsets):
            h = kv * self.rep + t
            q = self.rows(attn.q_proj.weight, h)
            q.zero_()
            gate = gates[t] if gates else None
            if gate is None:
                qv, kvec = offset_phase(self.c, off)
                q[:, self.at(MARK)] = qv.to(self.dt)
            else:
                for coord, o in gate:
                    qv, kvec = offset_phase(self.c, o)
                    q[:, coord] += qv.to(self.dt)
                q[self.dim(CLEAN[0]), self.at(MARK)] = anchor
            self.rows(attn.k_proj.weight, kv)[:, self.at(MARK)] = kvec.to(self.dt)
            o = self.ocols(attn, h)
            o.zero_()
            for vr, coords, s in outs[t]:
                for i, coord in zip(vr, coords):
                    o[coord, i] = s

    def match_heads(self, attn, kvs, q_gates, k_gate, q_sig, k_sig, srcs, out, gate, sig_w, earliest=0.0):
        """Copy heads (one per KV head in kvs): score = gate (query: q_gates[i] on, the others
        pushed away; key: the k_gate indicator) + sig_w^2 * q_sig . k_sig (5-dim signatures at
        residual coordinates q_sig / k_sig), in the clean RoPE pairs; each copies the centred
        8-dim code at srcs[i] through `out` [d, 8]. earliest > 0 adds a preference for the
        farthest key where signatures tie (several needles of one key are listed in document
        order): RoPE pair RECENCY's sine term, 0 at distance 0 and rising to ~1570 tokens, on
        keys with the k_gate indicator only (a plain distance bonus would pull to the text's start)."""
        gate_dim, sig_dims = self.dim(CLEAN[-1]), hd_dims(CLEAN[:SIG], self.hd)
        recency_cos, recency_sin = self.dim(RECENCY), self.dim(RECENCY + 8)
        b = self.b
        for kv, qgate, src in zip(kvs, q_gates, srcs):
            kr = self.rows(attn.k_proj.weight, kv)
            kr.zero_()
            kr[gate_dim, b + k_gate] = gate
            kr[self.dim(ANCHOR_K), b + MARK] = 1.0  # anchor (pairs with nothing in q: keeps k well defined)
            if earliest:
                kr[recency_cos, b + k_gate] = 1.0  # needles only
            for i, dim in enumerate(sig_dims):
                kr[dim, b + k_sig + i] = sig_w
            vr = self.rows(attn.v_proj.weight, kv)
            vr.zero_()
            for i in range(8):  # centred: a head that attends uniformly writes ~0
                vr[i, b + src + i] = 1.0
                vr[i, b + MARK] = -float(self.mu8[i])
            for h in range(kv * self.rep, (kv + 1) * self.rep):
                qr = self.rows(attn.q_proj.weight, h)
                qr.zero_()
                # +gate at its own slot; -gate at the other slots and where no slot is on, so
                # an idle head avoids the needles and spreads over the text (centred: ~0)
                for other in q_gates:
                    qr[gate_dim, b + other] = 2 * gate if other == qgate else -gate
                qr[gate_dim, b + MARK] = -gate
                qr[self.dim(ANCHOR_Q), b + MARK] = 1.0
                qr[recency_sin, b + qgate] = -earliest  # ~sin(theta * distance): 0 near, grows far
                for i, dim in enumerate(sig_dims):
                    qr[dim, b + q_sig + i] = sig_w
                o = self.ocols(attn, h)
                o.zero_()
                o[:, :8] = (out / self.rep).to(self.dt)


SAMPLE = "One of the special magic numbers for calm-fountain is: 1234567. The sky is blue."
TEXT = ("The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. "
        "A knew always from short there slowly told dog boat. Was builds saw teacher letter found "
        "every under there. Day after little hill horse red over a some was that milk hill.")


def layer1_input_rms(model):
    """Mean RMS of layer 1's input on a needle sentence (layer 0 is frozen, so this holds)."""
    from model import rope_cos_sin
    ids = torch.tensor([[ord(ch) for ch in SAMPLE]])
    x = model.embed_tokens(ids)
    cos, sin = rope_cos_sin(ids.shape[1], model.c.head_dim, model.c.rope_theta, dtype=x.dtype)
    x = model.layers[0](x, cos, sin, None)
    return float(x.pow(2).mean(-1).sqrt().mean())


