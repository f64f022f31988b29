"""Warm start of a retrieval circuit in layers 0-2 (train.py does it unless --no-induction-init).

Why: NIAH teacher-forced answering is induction (copy the characters that followed an
earlier occurrence of the current context), conditioned on the key when several needles
compete. From a random init this model class sits on the induction saddle longer than the CPU
budget allows (models/README.md: 8-layer runs at chance on copy text after 240 steps of 4K
tokens; 2-layer runs only reached "copy some character seen in the context"). Each half of the
circuit only gets gradient once the other half exists, so it is built by hand and training
starts next to the solution; every weight stays trainable (train.py --freeze-key-path keeps
the key-conditioned heads fixed, see key_path_masks).

The circuit, over the characters of keys, numbers, UUIDs, copy strings and the ": " before an
answer (CHARS). Offset heads read a marker coordinate shared by all embeddings into the fast
RoPE pairs 0-3 (q_p conj(k_p) = exp(-i theta_p offset)); matching heads compare codes in the
slowest pairs, which barely rotate over 1024 positions, so a match does not depend on distance.
  layer 0: KV head 0 attends 1 and 2 back (query heads 0, 1) and writes codes of those tokens
    into subspaces P[0], P[1] plus exact indicators "that token is ':'" (C[0], C[1]); KV head 1
    attends 3 back (P[2]) and to the token itself (T: a clean copy code that later layers read
    instead of the embedding, which layer 1's copy heads overwrite with their predictions);
    KV head 2 attends 6 and 7 back (KN: at a needle's first value character, "...KEY is: V",
    these are the key's last two characters).
  layer 1: induction votes: KV heads 0, 1 and 3 match the current / previous / two-back token
    with the key position's previous / two-back / three-back token and copy the key position's
    token through the embeddings' duals, so the tied LM head scores it; a position repeating
    three characters gets three votes. KV head 2 reads the asked key: 36 and 37 back (KQ), after
    "...KEY mentioned in the provided text is: " the key's last two characters; its query is
    gated by C[0] (only where the previous token is ':'; elsewhere an anchor alone: near-uniform).
  layer 2, KV head 0: the key-conditioned copy head: score = gate (query C[0]: the previous
    token is ':'; key C[1]: two back is ':', i.e. a needle's first value character) + the match
    of KQ (query) with KN (key); it copies that position's token (from T). Of several needles
    the one with the asked key wins; the following value characters come by induction.
"""
import math

import torch

CHARS = "0123456789abcdefghijklmnopqrstuvwxyz :-.,?"
KEY_PATH_HEADS = ((0, 2), (1, 2), (2, 0))  # (layer, KV head) of the key-conditioned path
NEEDLE_KEY_OFFSETS = (6, 7)      # the key's last two characters from a needle's first value character
QUESTION_KEY_OFFSETS = (36, 37)  # ... and from the token after "...KEY mentioned in the provided text is:"


def separated_codes(n, dim, gen, iters=400, lr=0.05):
    """n unit vectors in R^dim with small pairwise |cos| (repulsion from a random start)."""
    x = torch.randn(n, dim, generator=gen, dtype=torch.float64)
    x = x / x.norm(dim=1, keepdim=True)
    for _ in range(iters):
        g = x @ x.T
        g.fill_diagonal_(0)
        x = x - lr * (g @ x)
        x = x / x.norm(dim=1, keepdim=True)
    return x


def slow_rope_dims(head_dim, n_pairs):
    """Indices of the n_pairs slowest rotate-half RoPE pairs (nearly position-free channels)."""
    half = head_dim // 2
    pairs = range(half - n_pairs, half)
    return [p for p in pairs] + [p + half for p in pairs]


def orthonormal_complement(avoid, n, gen):
    """n orthonormal columns [d, n] orthogonal to the rows of avoid [k, d]."""
    qb, _ = torch.linalg.qr(avoid.T)
    r = torch.randn(avoid.shape[1], n, generator=gen, dtype=torch.float64)
    r = r - qb @ (qb.T @ r)
    q, _ = torch.linalg.qr(r)
    return q


OFFSET_PAIRS = ((0, 1.0), (1, 1.0), (2, 1.0), (3, 1.0))  # RoPE pairs of the offset heads


def offset_query_key(c, offset, w=OFFSET_PAIRS):
    """q and k rows [hd] (reading the marker) for attention `offset` tokens back, phase on q so
    the query heads of one KV head can use different offsets: q_p conj(k_p) = exp(-i theta_p o)."""
    hd, half = c.head_dim, c.head_dim // 2
    inv_freq = 1.0 / (c.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    q, k = torch.zeros(hd, dtype=torch.float64), torch.zeros(hd, dtype=torch.float64)
    for p, wp in w:
        ang = float(inv_freq[p]) * offset
        q[p], q[p + half] = wp * math.cos(ang), -wp * math.sin(ang)
        k[p] = wp
    return q, k


@torch.no_grad()
def implant_induction(model, gen, alpha=0.25, gain=3.0, out_scale=1.0, final_norm=4.0,
                      offset_gain=3.5, gate=3.0, sig_w=3.0, anchor=2.0, key_gain=4.0, key_out=0.7):
    c = model.c
    d, hd, rep = c.hidden_size, c.head_dim, c.num_attention_heads // c.num_key_value_heads
    n_sub = 3 * 8 + 8 + 4 * 6 + 2  # P[0..2], T, KN/KQ of two key characters, C[0..1]
    if (c.num_hidden_layers < 3 or hd < 16 or c.num_key_value_heads < 4 or rep != 2
            or d < len(CHARS) + 1 + n_sub):
        raise ValueError(f"the retrieval warm start needs >= 3 layers, >= 4 KV heads with 2 "
                         f"query heads each, head_dim >= 16 and hidden_size >= "
                         f"{len(CHARS) + 1 + n_sub} (got {c.num_hidden_layers}, "
                         f"{c.num_key_value_heads}, {c.num_attention_heads}, {hd}, {d}); "
                         f"use --no-induction-init")
    u = d - 1  # marker coordinate: 0.1 in every embedding (offset heads read it; through the tied
    # LM head it shifts all logits equally, which softmax ignores)
    E = model.embed_tokens.weight
    E[:, u] = 0.1
    ids = torch.tensor([ord(ch) for ch in CHARS])
    X = model.layers[0].input_layernorm(E[ids]).double()  # [n, d] layer-0 inputs of the characters
    f = lambda t: t.to(E.dtype)  # noqa: E731
    # residual subspaces orthogonal to the characters, the marker and each other
    basis = orthonormal_complement(torch.cat([X, torch.eye(d, dtype=torch.float64)[u:u + 1]], 0),
                                   n_sub, gen)
    cols = iter(range(n_sub))
    take = lambda n: basis[:, [next(cols) for _ in range(n)]]  # noqa: E731
    P = [take(8) for _ in range(3)]
    T = take(8)
    KN, KQ = [take(6) for _ in range(2)], [take(6) for _ in range(2)]
    C = [take(1) for _ in range(2)]  # exact indicators: the token 1 (2) back is ':'
    code1 = separated_codes(len(CHARS), 8, gen)   # matching code
    code2 = separated_codes(len(CHARS), hd, gen)  # copying code (layer 1)
    codeT = separated_codes(len(CHARS), 8, gen)   # copying code of T (layer 2)
    sig = [separated_codes(len(CHARS), 6, gen) for _ in range(2)]  # key-character codes
    X_pinv = torch.linalg.pinv(X.T)
    read_x = lambda code: code.T @ X_pinv  # noqa: E731  [k, d]: x(char) -> code
    read1 = read_x(code1)
    sig_read = torch.cat([read_x(sig[0]), read_x(sig[1])])  # V of both key readers
    colon_read = read_x(torch.eye(len(CHARS), dtype=torch.float64)[:, CHARS.index(":")][:, None])
    duals = torch.linalg.pinv(E[ids].double())  # [d, n]: E[char] . duals[:, j] = delta
    rows = lambda w, i: w[i * hd:(i + 1) * hd]  # noqa: E731  rows of one head in q/k/v
    ocols = lambda at, h: at.o_proj.weight[:, h * hd:(h + 1) * hd]  # noqa: E731
    a0, a1, a2 = (model.layers[i].self_attn for i in range(3))

    def offset_head(at, kv, offsets, value, outs, q_read=None, q_anchor=None):
        """Query head kv*rep+t attends offsets[t] back (q reads the marker, or q_read: a gate);
        V = value [16, d] rows; O of query head t writes V[lo:hi] along basis B: outs[t] = (lo, hi, B)."""
        rows(at.k_proj.weight, kv).zero_()
        rows(at.v_proj.weight, kv).zero_()
        rows(at.v_proj.weight, kv)[:value.shape[0]] = f(value)
        for t, off in enumerate(offsets):
            h = kv * rep + t
            qv, kvec = offset_query_key(c, off)
            rows(at.q_proj.weight, h).zero_()
            if q_read is None:
                rows(at.q_proj.weight, h)[:, u] = f(qv)
            else:
                rows(at.q_proj.weight, h)[:] = f(qv[:, None] * q_read[None, :])
                rows(at.q_proj.weight, h)[q_anchor[0], u] = q_anchor[1]
            rows(at.k_proj.weight, kv)[:, u] = f(kvec)
            ocols(at, h).zero_()
            lo, hi, B = outs[t]
            ocols(at, h)[:, lo:hi] = f(alpha / rep * B)

    # layer 0: offset heads writing codes of the tokens 1, 2, 3, 0, 6 and 7 back
    offset_head(a0, 0, (1, 2), torch.cat([read1, colon_read]),
                [(0, 9, torch.cat([P[0], C[0]], 1)), (0, 9, torch.cat([P[1], C[1]], 1))])
    offset_head(a0, 1, (3, 0), torch.cat([read1, read_x(codeT)]), [(0, 8, P[2]), (8, 16, T)])
    (_, kv_n), (_, kv_q), (_, kvr) = KEY_PATH_HEADS
    offset_head(a0, kv_n, NEEDLE_KEY_OFFSETS, sig_read, [(0, 6, KN[0]), (6, 12, KN[1])])
    g = torch.full((hd,), gain, dtype=E.dtype)
    g[[p for p, _ in OFFSET_PAIRS] + [p + hd // 2 for p, _ in OFFSET_PAIRS]] = offset_gain
    a0.q_norm.weight.copy_(g)
    a0.k_norm.weight.copy_(g)

    copy_out = duals @ code2  # [d, hd]: the LM head's logit of s ~ cos(code2(s), code2(copied))
    slow = slow_rope_dims(hd, 4)

    def match_head(at, kv, q_read, k_read, value_read, out):
        """Query heads of `kv` score q_read(current) . k_read(key position) in the slow pairs and
        copy value_read(key position) (a code of its token) to the logits through `out`."""
        rows(at.k_proj.weight, kv).zero_()
        rows(at.v_proj.weight, kv).zero_()
        rows(at.v_proj.weight, kv)[:value_read.shape[0]] = f(value_read)
        for i, dim in enumerate(slow):
            rows(at.k_proj.weight, kv)[dim] = f(k_read[i])
        for h in range(kv * rep, (kv + 1) * rep):
            rows(at.q_proj.weight, h).zero_()
            for i, dim in enumerate(slow):
                rows(at.q_proj.weight, h)[dim] = f(q_read[i])
            ocols(at, h).zero_()
            ocols(at, h)[:, :out.shape[1]] = f(out / rep)

    # layer 1: three induction votes (1, 2 and 3 characters back match; value: the token itself,
    # read from the embedding) and the question's key readers (36/37 back, only where the
    # previous token is ':', else the query is the anchor alone: near-uniform, weak)
    X1 = X / X.norm(dim=1, keepdim=True) * math.sqrt(d)
    value1 = code2.T @ torch.linalg.pinv(X1.T)
    match_head(a1, 0, read1, P[0].T, value1, out_scale * copy_out)
    match_head(a1, 1, P[0].T, P[1].T, value1, out_scale * copy_out)
    match_head(a1, 3, P[1].T, P[2].T, value1, out_scale * copy_out)
    offset_head(a1, kv_q, QUESTION_KEY_OFFSETS, sig_read, [(0, 6, KQ[0]), (6, 12, KQ[1])],
                q_read=C[0][:, 0] / alpha, q_anchor=(slow[0], anchor))
    a1.q_norm.weight.copy_(g)
    a1.k_norm.weight.copy_(g)

    # layer 2, KV head 0: key-conditioned copy of a needle's first value character. Dims:
    # slow[0] = gate (query: the previous token is ':'; key: the token two back is ':'), the
    # other slow dims but slow[4] = key signature (query KQ, key KN: the asked key against the
    # needle's), 0 / 1 = anchors (keep q and k well defined where gate and signature are ~0).
    sig_dims = [dim for dim in slow if dim not in (slow[0], slow[4])]
    rows(a2.k_proj.weight, kvr).zero_()
    rows(a2.v_proj.weight, kvr).zero_()
    rows(a2.v_proj.weight, kvr)[:8] = f(T.T / alpha)
    krow = rows(a2.k_proj.weight, kvr)
    krow[slow[0]] = f(gate * C[1][:, 0] / alpha)
    krow[1, u] = anchor
    for i, dim in enumerate(sig_dims):
        krow[dim] = f(sig_w * (KN[0][:, i] + KN[1][:, i]) / alpha)
    for h in range(kvr * rep, (kvr + 1) * rep):
        qrow = rows(a2.q_proj.weight, h)
        qrow.zero_()
        qrow[slow[0]] = f(gate * C[0][:, 0] / alpha)
        qrow[0, u] = anchor
        for i, dim in enumerate(sig_dims):
            qrow[dim] = f(sig_w * (KQ[0][:, i] + KQ[1][:, i]) / alpha)
        ocols(a2, h).zero_()
        ocols(a2, h)[:, :8] = f(key_out / rep * duals @ codeT)
    g2 = torch.full((hd,), gain, dtype=E.dtype)
    g2[[slow[0]] + sig_dims] = key_gain
    a2.q_norm.weight.copy_(g2)
    a2.k_norm.weight.copy_(g2)
    model.norm.weight.fill_(final_norm)


def key_path_masks(model):
    """{parameter name: bool mask} of the key-conditioned path (layer 0 KV head 2, layer 1 KV
    head 2, layer 2 KV head 0 and layer 2's q/k norm gains). train.py keeps these entries at
    their hand-built values (--freeze-key-path): in a first run that trained them, the path
    was gone after the 128/256-token phases, whose texts never ask a key-conditioned question
    in the NIAH wording, so nothing there rewards it."""
    c = model.c
    hd, rep = c.head_dim, c.num_attention_heads // c.num_key_value_heads
    params = dict(model.named_parameters())
    masks = {}
    for layer, kv in KEY_PATH_HEADS:
        at = f"layers.{layer}.self_attn."
        for name, heads in (("q_proj", range(kv * rep, (kv + 1) * rep)), ("k_proj", [kv]),
                            ("v_proj", [kv])):
            m = torch.zeros_like(params[at + name + ".weight"], dtype=torch.bool)
            for h in heads:
                m[h * hd:(h + 1) * hd] = True
            masks[at + name + ".weight"] = m
        m = torch.zeros_like(params[at + "o_proj.weight"], dtype=torch.bool)
        m[:, kv * rep * hd:(kv + 1) * rep * hd] = True
        masks[at + "o_proj.weight"] = m
    last = KEY_PATH_HEADS[-1][0]  # the copy head's layer: its q/k gains shape the key match
    for name in ("q_norm", "k_norm"):
        w = params[f"layers.{last}.self_attn.{name}.weight"]
        masks[f"layers.{last}.self_attn.{name}.weight"] = torch.ones_like(w, dtype=torch.bool)
    return masks
