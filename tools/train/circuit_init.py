"""Warm start of an induction circuit in layers 0-1 (train.py does it unless --no-induction-init).

Why: NIAH teacher-forced answering is induction (copy the characters that followed an
earlier occurrence of the current context). From a random init this model class sits on the
induction saddle longer than the CPU budget allows: here 8-layer runs stayed at chance on copy
text (answer accuracy 0.04-0.06 after 210-240 steps of 4K tokens) and 2-layer runs reached
only the "copy some character seen in the context" level (0.14 after 400-600 steps), see
models/README.md. Each half of the circuit only gets gradient once the other half exists, so
it is built by hand and training starts next to the solution; every weight stays trainable.
Before the first step the 8-layer model copies 87% of the repeated characters of copy text
and 86% of the answer characters of single-needle NIAH at 512 tokens (a plain init: 4%).

The circuit, over the characters of keys, numbers, UUIDs, copy strings and the ": " before an
answer (CHARS):
  layer 0, KV heads 0 and 1: attend to the previous token and to the one before it, and write
    an 8-d code of it into residual subspaces P[0], P[1], orthogonal to the characters'
    embeddings and to each other;
  layer 1, KV head 0: query = code of the current token, key = P[0] (the key position's
    previous token); KV head 1: query = P[0] (the current position's previous token), key =
    P[1] (the key position's token two back). Both in the slowest RoPE pairs, so the match does
    not depend on distance; the position that repeats both characters gets both votes. Value =
    a 16-d code of the key position's own token, written back through the duals of the
    embeddings, so the tied LM head scores that token highest.
"""
import math

import torch

CHARS = "0123456789abcdefghijklmnopqrstuvwxyz :-.,?"


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


@torch.no_grad()
def implant_induction(model, gen, alpha=0.25, gain=3.0, out_scale=1.0, final_norm=4.0):
    c = model.c
    d, hd, rep = c.hidden_size, c.head_dim, c.num_attention_heads // c.num_key_value_heads
    if c.num_hidden_layers < 2 or hd < 16 or c.num_key_value_heads < 2 or d < len(CHARS) + 17:
        raise ValueError(f"induction init needs >= 2 layers, >= 2 KV heads, head_dim >= 16 and "
                         f"hidden_size >= {len(CHARS) + 17} (got {c.num_hidden_layers}, "
                         f"{c.num_key_value_heads}, {hd}, {d}); use --no-induction-init")
    # layer 0: KV head 0 attends to the previous token, KV head 1 to the one before it
    model.implant_offset_heads([(0, 0, 1), (0, 1, 2)], gain=3.5)
    u = d - 1  # the marker coordinate of implant_offset_heads
    E = model.embed_tokens.weight
    ids = torch.tensor([ord(ch) for ch in CHARS])
    X = model.layers[0].input_layernorm(E[ids]).double()  # [n, d] layer-0 inputs of the characters
    # P[k]: 8 residual directions for the token k+1 back, orthogonal to the characters,
    # the marker and each other.
    both = orthonormal_complement(torch.cat([X, torch.eye(d, dtype=torch.float64)[u:u + 1]], 0), 16, gen)
    P = [both[:, :8], both[:, 8:]]
    code1 = separated_codes(len(CHARS), 8, gen)   # matching code
    code2 = separated_codes(len(CHARS), hd, gen)  # copying code
    read1 = code1.T @ torch.linalg.pinv(X.T)      # [8, d]: x(char) -> code1(char)
    f = lambda t: t.to(E.dtype)  # noqa: E731

    def head_rows(w, kv_or_q):  # rows of one head in a q/k/v projection
        return w[kv_or_q * hd:(kv_or_q + 1) * hd]

    a0, a1 = model.layers[0].self_attn, model.layers[1].self_attn
    # layer 0: V of KV head k = code1 of the attended token, O writes it along P[k]
    for k in range(2):
        head_rows(a0.v_proj.weight, k).zero_()
        head_rows(a0.v_proj.weight, k)[:8] = f(read1)
        for h in range(k * rep, (k + 1) * rep):
            a0.o_proj.weight[:, h * hd:(h + 1) * hd] = 0
            a0.o_proj.weight[:, h * hd:h * hd + 8] = f(alpha / rep * P[k])
    # layer 1: KV head 0 matches the current token with the key position's previous token,
    # KV head 1 the previous token with the key position's token two back (two votes for the
    # position that repeats two characters); codes in the slowest RoPE pairs.
    slow = slow_rope_dims(hd, 4)
    X1 = X / X.norm(dim=1, keepdim=True) * math.sqrt(d)
    value = code2.T @ torch.linalg.pinv(X1.T)  # [hd, d]: the key position's own token
    duals = torch.linalg.pinv(E[ids].double())  # [d, n]: E[char] . duals[:, j] = delta
    for k, (q_read, k_read) in enumerate([(read1, P[0].T), (P[0].T, P[1].T)]):
        head_rows(a1.k_proj.weight, k).zero_()
        head_rows(a1.v_proj.weight, k)[:] = f(value)
        for i, dim in enumerate(slow):
            head_rows(a1.k_proj.weight, k)[dim] = f(k_read[i])
        for h in range(k * rep, (k + 1) * rep):
            head_rows(a1.q_proj.weight, h).zero_()
            for i, dim in enumerate(slow):
                head_rows(a1.q_proj.weight, h)[dim] = f(q_read[i])
            # the LM head's logit of token s gets ~ out_scale * cos(code2(s), code2(copied))
            a1.o_proj.weight[:, h * hd:(h + 1) * hd] = f(out_scale / rep * duals @ code2)
    a1.q_norm.weight.fill_(gain)
    a1.k_norm.weight.fill_(gain)
    model.norm.weight.fill_(final_norm)
