"""Retrieval circuit in a reserved, frozen slice of the residual stream (train.py builds it
unless --no-induction-init and keeps it fixed: frozen_masks).

Why isolated: the session-4 circuit lived in the shared residual stream and read characters
through the (trainable) embeddings; it chose the asked needle in 3 of 4 multikey texts before
training and was at chance after it, although its own weights were frozen, because training
moved what it read. Here the circuit owns the last CIRCUIT_DIMS coordinates: the embeddings'
columns there are fixed character codes, only frozen heads write there (every trainable
o_proj/down_proj row of those coordinates stays zero), the norms' gains there are fixed, and
layer 0 (attention and MLP) is frozen whole, so the inputs of every frozen head are the same
before and after training. q/k RMSNorm makes the frozen heads' attention independent of the
overall residual scale, which is the one thing training still changes.

Circuit (offsets in tokens = bytes back from the current position; o = tokens since the last
':' or ',', so o = 1 is the ' ' of ": ", o = 2 a value's first character):
  layer 0 (frozen whole): offset heads write codes of the tokens 1, 2, 3 back (P0-P2), exact
    indicators "k back is ':'" (C1, C2, C3, C5) and "k back is ','" (CM1-CM3); KN = codes of
    the characters 9 and 10 back (at o = 5 of a needle "...KEY is: VALUE", the key's last two
    characters); one head cancels the embeddings' hex one-hot so the LM head reads only what
    the copy heads write there.
  layer 1: induction votes (trainable, warm-started: 1-, 2- and 3-character context, KV heads
    0, 1, 3) and the asked-key reader (frozen, KV 2): at o = 1, 2, 3 of the answer to "...KEY
    mentioned in the provided text is:" it reads the key's last two characters (35 + o and
    36 + o back) into KQ; elsewhere its query is an anchor alone (near uniform, centred: ~0).
  layer 2, KV 0-2 (frozen): key heads for the value's characters 1, 2, 3. Score = gate (query
    o = 1 / 2 / 3; key: o = 5 of a needle) + KQ . KN; each copies the code of the needle's
    value character 1 / 2 / 3 (3 / 2 / 1 back from o = 5) into the hex block, which the tied LM
    head decodes; where needles tie (one key, several values) the farthest one wins (earliest:
    multivalue lists answers in document order). The rest of a value follows by induction.
  layer 3, KV 0 (frozen): at o = 1 of every needle, the nearest earlier needle (its o = 5;
    nearest by RoPE pair 4, whose cosine falls monotonically over 3141 tokens) -> PVP1, the
    signature of that needle's first three value characters.
  layer 4, KV 0 (frozen): query head 0 moves PVP1 from o = 1 to PVP at o = 5 of the same
    needle (4 back; only there, so idle heads find no signature elsewhere); query head 1, at
    o = 1, 2, 3 after a ',' (the next answer of a list), reads the signature of the previous
    answer's first three characters (its fourth character, 4 + o back) -> QPV.
  layer 5, KV 0-2 (frozen): list heads: like layer 2's key heads, but the query is on after
    ',' and matches QPV with the needles' PVP: "the needle after the one just answered".
  layers 2 and 5, KV 3 (frozen): baseline heads (baseline_head) that cancel what idle copy
    heads write.
"""
import torch

from circuit_parts import (C1, C2, C3, C5, CHARS, CLEAN, CM1, CM2, CM3, CIRCUIT_DIMS, COLON, COMMA,
                           HEX, HEXB, KN, KQ, MARK, N_READ, OFFSET_PAIRS, P, PVP, PVP1, QPV, RECENCY,
                           SIG, SLOW8, ANCHOR_K, ANCHOR_Q, Builder, gain_scale, hd_dims,
                           layer1_input_rms)

CALIB_TEXT = (
    "Some special magic numbers are hidden within the following text. Make sure to memorize it. "
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. "
    "One of the special magic numbers for calm-fountain is: 1234567. A knew always from short "
    "there slowly told dog boat. Was builds saw teacher letter found every under there. One of "
    "the special magic uuids for quiet-harbor is: 3f2a9c1e-77b0-4d21-9a5e-c03b8e61d7f4. Day "
    "after little hill horse red over a some was that milk hill. The grass is green. The sky is "
    "blue. Field king very brings warm had house then when was brings good very there very. "
    "The pass key is 48213. Remember it. Small before to year from tree farmer keeps brings "
    "quickly queen. One of the special magic numbers for amber-castle is: 7654321. Sea in she "
    "dog boat because again song came tree their song. Here we go. There and back again.\n"
    "What is the special magic number for calm-fountain mentioned in the provided text?\n"
    "The special magic number for calm-fountain mentioned in the provided text is: 1234567, 7654")
NEEDLE_KEY_OFFSETS = (9, 10)           # key's last two characters from o = 5
QUESTION_KEY_OFFSETS = (36, 37)        # ... from o = 1 after "...mentioned in the provided text is:"
FROZEN_HEADS = ((0, 0), (0, 1), (0, 2), (0, 3), (1, 2), (2, 0), (2, 1), (2, 2), (2, 3), (3, 0),
                (4, 0), (5, 0), (5, 1), (5, 2), (5, 3))  # (layer, KV head)
FROZEN_GAIN_LAYERS = sorted({layer for layer, _ in FROZEN_HEADS})  # q/k gains are per layer


@torch.no_grad()
def implant_circuit(model, gen, code_norm=4.0, offset_gain=3.5, gate=8.0, sig_w=4.5,
                    key_gain=3.0, key_out=8.0, final_gain=1.0, vote_gain=3.0, vote_out=0.3,
                    final_norm=4.0, recency_gain=19.0, hop_gate_gain=17.0, list_sig_w=6.0, list_key_gain=5.0,
                    earliest=1.0, earliest_gain=18.0):
    c = model.c
    d, hd = c.hidden_size, c.head_dim
    rep = c.num_attention_heads // c.num_key_value_heads
    if (c.num_hidden_layers < 6 or hd % 16 or c.num_key_value_heads < 4 or rep != 2
            or d < 128):
        raise ValueError(f"the retrieval circuit needs >= 6 layers, 4 KV heads with 2 query heads "
                         f"each, head_dim a multiple of 16 and hidden_size >= 128 (got "
                         f"{c.num_hidden_layers}, {c.num_key_value_heads}, "
                         f"{c.num_attention_heads}, {hd}, {d}); use --no-induction-init")
    B = Builder(model, gen, code_norm)
    b = B.b
    B.embed()
    E = model.embed_tokens.weight
    dt = E.dtype
    ids = torch.tensor([ord(ch) for ch in CHARS])
    # layer-0 inputs are RMS-normalised embeddings; the reserved codes dominate their norm
    rms0 = float(model.layers[0].input_layernorm(E[ids]).double()[:, b + MARK].reciprocal().mean())
    at = [layer.self_attn for layer in model.layers]
    for layer in model.layers:  # trainable writers never touch the reserved block
        layer.self_attn.o_proj.weight[b:] = 0
        layer.mlp.down_proj.weight[b:] = 0
        layer.input_layernorm.weight[b:] = 1
        layer.post_attention_layernorm.weight[b:] = 1
    for w in (model.layers[0].mlp.gate_proj, model.layers[0].mlp.up_proj, model.layers[0].mlp.down_proj):
        w.weight.zero_()  # layer 0 is the frozen feature extractor; its MLP would drift layer 1's scale

    def read(rmat, scale):  # [k, N_READ] over COLON..OTHER -> [k, d] row block
        out = torch.zeros(rmat.shape[0], d, dtype=torch.float64)
        out[:, b + COLON:b + COLON + N_READ] = rmat * scale
        return out

    def gains(layer, values, default=None):
        """q/k gains of a layer: `values` [(head_dim-16 dims, gain)], the rest `default` (None:
        the current gain); all times gain_scale(hd) so a wider head attends the same."""
        g = torch.full((hd,), default if default is not None else float(at[layer].q_norm.weight[0]), dtype=dt)
        for dims, v in values:
            g[hd_dims(dims, hd)] = v
        g *= gain_scale(hd)
        at[layer].q_norm.weight.copy_(g)
        at[layer].k_norm.weight.copy_(g)

    offset_dims = list(OFFSET_PAIRS) + [p + 8 for p in OFFSET_PAIRS]  # head_dim-16 names
    coords = lambda start, n: [b + start + i for i in range(n)]  # noqa: E731
    cr = B.char_read()  # code8 * code_norm

    # ---- layer 0 (frozen): P0-P2 with ':' and ',' indicators, KN, hex cancel
    v_code = {i: r for i, r in enumerate(read(cr / code_norm, rms0))}
    v_code[8] = read(B.flag_read(COLON), rms0)[0]
    v_code[9] = read(B.flag_read(COMMA), rms0)[0]
    code_and_flags = lambda p, cc, cm: [(range(8), coords(p, 8), 1.0), ([8], [b + cc], 1.0),  # noqa: E731
                                        ([9], [b + cm], 1.0)]
    B.offset_head(at[0], 0, (1, 2), v_code, [code_and_flags(P[0], C1, CM1), code_and_flags(P[1], C2, CM2)])
    B.offset_head(at[0], 1, (3, 5), v_code, [code_and_flags(P[2], C3, CM3), [([8], [b + C5], 1.0)]])

    def sig_read(scale):  # V rows of a key reader: centred signatures of two characters
        rows = {}
        for k in range(2):
            for i in range(SIG):
                r = read((B.sig[k] @ cr / code_norm)[i:i + 1], scale)[0]
                r[b + MARK] = -float(B.sig[k][i] @ B.mu8)  # MARK is 1 in the raw residual
                rows[k * SIG + i] = r
        return rows

    two_sigs = lambda dst: [[(range(SIG), coords(dst, SIG), 1.0)],  # noqa: E731
                            [(range(SIG, 2 * SIG), coords(dst, SIG), 1.0)]]
    B.offset_head(at[0], 2, NEEDLE_KEY_OFFSETS, sig_read(rms0), two_sigs(KN))
    hexr = torch.zeros(16, N_READ, dtype=torch.float64)
    hexr[:, HEXB:HEXB + 16] = torch.eye(16, dtype=torch.float64)
    B.offset_head(at[0], 3, (0, 0), {i: r for i, r in enumerate(read(hexr, rms0))},
                  [[(range(16), coords(HEXB, 16), -1.0)], []])
    gains(0, [(offset_dims, offset_gain)], default=1.0)

    # ---- layer 1: asked-key reader (frozen KV 2) and induction votes (trainable KV 0, 1, 3)
    qk0, qk1 = QUESTION_KEY_OFFSETS
    B.offset_head(at[1], 2, QUESTION_KEY_OFFSETS, sig_read(layer1_input_rms(model)), two_sigs(KQ),
                  gates=[[(b + C1, qk0), (b + C2, qk0 + 1), (b + C3, qk0 + 2)],
                         [(b + C1, qk1), (b + C2, qk1 + 1), (b + C3, qk1 + 2)]])
    # the characters' trainable embedding parts start orthonormal (other tokens keep their small
    # random rows), so the votes' copy directions barely touch the logits of other tokens
    E[ids, :b] = torch.linalg.qr(torch.randn(b, len(CHARS), generator=gen, dtype=torch.float64))[0].T.to(dt)
    copy_out = torch.linalg.pinv(E[ids, :b].double()) @ B.code8  # [b, 8]: code -> that char's logit
    cur = read(cr / code_norm, 1.0)  # [8, d] current token's code8 (scale-free use)
    prev = [torch.zeros(8, d, dtype=torch.float64) for _ in range(3)]
    for k in range(3):
        prev[k][:, b + P[k]:b + P[k] + 8] = torch.eye(8, dtype=torch.float64)

    slow8 = hd_dims(SLOW8, hd)

    def vote(attn, kv, q_read, k_read):
        """Induction vote: q_read(current) . k_read(key position) in RoPE pairs 4-7; copies the
        key position's token through the trainable embeddings' duals."""
        B.rows(attn.k_proj.weight, kv).zero_()
        B.rows(attn.v_proj.weight, kv).zero_()
        B.rows(attn.v_proj.weight, kv)[:8] = (cur * code_norm).to(dt)
        for i, dim in enumerate(slow8):
            B.rows(attn.k_proj.weight, kv)[dim] = k_read[i].to(dt)
        for h in range(kv * rep, (kv + 1) * rep):
            q = B.rows(attn.q_proj.weight, h)
            q.zero_()
            for i, dim in enumerate(slow8):
                q[dim] = q_read[i].to(dt)
            o = B.ocols(attn, h)
            o.zero_()
            o[:b, :8] = (vote_out / rep * copy_out).to(dt)

    vote(at[1], 0, cur, prev[0])
    vote(at[1], 1, prev[0], prev[1])
    vote(at[1], 3, prev[1], prev[2])
    gains(1, [(offset_dims, offset_gain)], default=vote_gain)

    # ---- layer 2 (frozen KV 0-2): the asked key's value, characters 1-3
    hex_out = torch.zeros(d, 8, dtype=torch.float64)  # code8 -> hex block (matched filter)
    for j, ch in enumerate(HEX):
        hex_out[b + HEXB + j] = B.code8[CHARS.index(ch)]
    srcs = (P[2], P[1], P[0])  # value characters 1, 2, 3 seen from o = 5
    B.match_heads(at[2], (0, 1, 2), (C1, C2, C3), C5, KQ, KN, srcs, key_out * hex_out, gate, sig_w,
                  earliest)
    gains(2, [(CLEAN, key_gain), ((RECENCY, RECENCY + 8), earliest_gain)], default=1.0)

    # V rows: value-prefix signature of the three characters P2, P1, P0 at a position (centred)
    psig_rows = {}
    for i in range(SIG):
        r = torch.zeros(d, dtype=torch.float64)
        for k, src in enumerate(srcs):
            r[b + src:b + src + 8] = B.psig[i, 8 * k:8 * k + 8]
            r[b + MARK] -= float(B.psig[i, 8 * k:8 * k + 8] @ B.mu8)
        psig_rows[i] = r

    # ---- layer 3 (frozen KV 0): at a needle's o = 1, the nearest earlier o = 5 -> PVP
    a3 = at[3]
    kr, vr = B.rows(a3.k_proj.weight, 0), B.rows(a3.v_proj.weight, 0)
    kr.zero_()
    vr.zero_()
    kr[B.dim(CLEAN[-1]), b + C5] = 1.0
    kr[B.dim(RECENCY), b + MARK] = 1.0
    kr[B.dim(ANCHOR_K), b + MARK] = 1.0
    for i, r in psig_rows.items():
        vr[i] = r.to(dt)
    for h in range(rep):
        qr = B.rows(a3.q_proj.weight, h)
        qr.zero_()
        qr[B.dim(CLEAN[-1]), b + C1] = 1.0   # gate: only at o = 1 ...
        qr[B.dim(RECENCY), b + C1] = 1.0     # ... and so is the preference for the nearest
        qr[B.dim(ANCHOR_Q), b + MARK] = 1.0
        o = B.ocols(a3, h)
        o.zero_()
        for i in range(SIG):
            o[b + PVP1 + i, i] = 1.0 / rep
    gains(3, [((RECENCY,), recency_gain), ((CLEAN[-1],), hop_gate_gain), ((ANCHOR_Q, ANCHOR_K), 1.0)])

    # ---- layer 4 (frozen KV 0): PVP from o = 1 to o = 5; QPV after ','
    v4 = {i: torch.zeros(d, dtype=torch.float64) for i in range(SIG)}
    for i in range(SIG):
        v4[i][b + PVP1 + i] = 1.0
    for i, r in psig_rows.items():
        v4[SIG + i] = r
    B.offset_head(at[4], 0, (4, 4), v4,
                  [[(range(SIG), coords(PVP, SIG), 1.0)], [(range(SIG, 2 * SIG), coords(QPV, SIG), 1.0)]],
                  gates=[None, [(b + CM1, 5), (b + CM2, 6), (b + CM3, 7)]])
    gains(4, [(offset_dims, offset_gain)])

    # ---- layer 5 (frozen KV 0-2): the next answer of a list: the needle after the last answer's
    B.match_heads(at[5], (0, 1, 2), (CM1, CM2, CM3), C5, QPV, PVP, srcs, key_out * hex_out, gate, list_sig_w)
    gains(5, [(CLEAN, list_key_gain)])

    center_idle_heads(model, b)
    for layer in (2, 5):
        baseline_head(B, at[layer], (0, 1, 2), 3, key_out * hex_out)
    nw = model.norm.weight
    nw[:b] = final_norm
    nw[b:] = 0
    nw[b + HEXB:b + HEXB + 16] = final_gain
    return B


def baseline_head(B, attn, copy_kvs, kv, out):
    """KV head `kv` attends uniformly (query: an anchor no key dimension pairs with) to the
    sum of the copy heads' values and subtracts it through their output map: an idle copy head
    attends nearly uniformly and writes the mean of its values over the text, which depends on
    the text (UUID-heavy haystacks differ from prose); this cancels it, per text, in the same
    layer (same RMS scale)."""
    hd, rep = B.hd, B.rep
    w = attn.v_proj.weight
    vsum = sum(w[k * hd:(k + 1) * hd][:8].clone() for k in copy_kvs)
    B.rows(attn.k_proj.weight, kv).zero_()
    B.rows(attn.v_proj.weight, kv).zero_()
    B.rows(attn.v_proj.weight, kv)[:8] = vsum
    B.rows(attn.k_proj.weight, kv)[B.dim(ANCHOR_K), B.b + MARK] = 1.0
    for t in range(rep):
        h = kv * rep + t
        B.rows(attn.q_proj.weight, h).zero_()
        B.rows(attn.q_proj.weight, h)[B.dim(ANCHOR_Q), B.b + MARK] = 1.0
        o = B.ocols(attn, h)
        o.zero_()
        if t == 0:
            o[:, :8] = (-out).to(B.dt)


IDLE_HEADS = ((2, 0), (2, 1), (2, 2), (3, 0), (4, 0), (5, 0), (5, 1), (5, 2))


@torch.no_grad()
def center_idle_heads(model, b):
    """Heads that are off (no ':' / ',' slot, no needle) attend nearly uniformly and write the
    mean of their values: subtract that mean, measured on CALIB_TEXT layer by layer, through
    the marker coordinate, so an idle head writes ~0 instead of a constant bias (the codes'
    own centring assumes a character mix that real haystacks only roughly have)."""
    from model import rope_cos_sin
    c = model.c
    hd = c.head_dim
    ids = torch.tensor([[ord(ch) for ch in CALIB_TEXT]])
    cos, sin = rope_cos_sin(ids.shape[1], hd, c.rope_theta)
    x, done = model.embed_tokens(ids), 0  # input of layer `done`, through calibrated layers
    for layer_index in sorted({layer for layer, _ in IDLE_HEADS}):
        for layer in model.layers[done:layer_index]:
            x = layer(x, cos, sin, None)
        done = layer_index
        layer = model.layers[layer_index]
        xn = layer.input_layernorm(x)[0]          # [L, d]
        mark = float(xn[:, b + MARK].mean())      # the marker as this layer's V reads it
        for li, kv in IDLE_HEADS:
            if li != layer_index:
                continue
            w = layer.self_attn.v_proj.weight[kv * hd:(kv + 1) * hd]
            mean_v = (xn @ w.T).mean(0)
            w[:, b + MARK] -= mean_v / mark


def frozen_masks(model):
    """{parameter name: bool mask} of everything train.py keeps at its built value: the frozen
    heads, all of layer 0, the q/k gains of the layers with frozen heads, the reserved columns
    of the embedding and rows of every residual writer, and the norms' gains there (the final
    norm's hex gains stay trainable: the model decides how loud the copy heads are)."""
    c = model.c
    hd, rep, d = c.head_dim, c.num_attention_heads // c.num_key_value_heads, c.hidden_size
    b = d - CIRCUIT_DIMS
    params = dict(model.named_parameters())
    masks = {n: torch.zeros_like(p, dtype=torch.bool) for n, p in params.items()}
    for layer, kv in FROZEN_HEADS:
        at = f"layers.{layer}.self_attn."
        for h in range(kv * rep, (kv + 1) * rep):
            masks[at + "q_proj.weight"][h * hd:(h + 1) * hd] = True
        masks[at + "k_proj.weight"][kv * hd:(kv + 1) * hd] = True
        masks[at + "v_proj.weight"][kv * hd:(kv + 1) * hd] = True
        masks[at + "o_proj.weight"][:, kv * rep * hd:(kv + 1) * rep * hd] = True
    for n in masks:
        if n.startswith("layers.0."):
            masks[n][:] = True
        if n.endswith(("o_proj.weight", "down_proj.weight")):
            masks[n][b:] = True
        if n.endswith(("input_layernorm.weight", "post_attention_layernorm.weight")):
            masks[n][b:] = True
        for layer in FROZEN_GAIN_LAYERS:
            if n.startswith(f"layers.{layer}.self_attn.") and n.endswith(("q_norm.weight", "k_norm.weight")):
                masks[n][:] = True
    masks["embed_tokens.weight"][:, b:] = True
    masks["norm.weight"][b:] = True
    masks["norm.weight"][b + HEXB:b + HEXB + 16] = False
    return {n: m for n, m in masks.items() if m.any()}
