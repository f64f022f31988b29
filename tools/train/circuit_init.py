"""The retrieval circuit: frozen heads and neurons in layers 0-5 and a reserved block of the
residual stream, built before training (train.py; kept fixed by frozen_masks).

Why built: from a random init this model class did not find key-conditioned retrieval within
the CPU budget (models/README.md), and a circuit of soft 5-dim signatures (sessions 4-7) topped
out at 0.67. This one is exact where it can be: flags and one-hot ordinals computed by bounded
MLP steps, key matches over the full codes of six key characters, and "nearest X" heads whose
RoPE recency profiles (PROFILES) were solved for the distances the tasks have. One copy head
answers every NIAH family teacher-forced; the trained part of the model learns the filler
language and the prompt wording around it.

Features (L = layer that writes them; A = attention, M = MLP; offsets in tokens back):
  embedding  MARK (M everywhere: it dominates the RMS, so training barely moves the circuit's
             scale), CODE (8-dim code of a character of CHARS), flags COLON, COMMA, SPCOM
             (' ' or ','), BOUND (' \\n.,:?'), NL, QMARK, PERIOD, UPPER, DASH, DIGIT, NOCODE
  L0 A       P1..P4: codes of the tokens 1-4 back, and flags of P1 (DASH, BOUND, QMARK, UPPER,
             COMMA, COLON), P2 (COMMA, COLON), P3 (COMMA)
  L0 M       F0 (position 0: an upper-case token after itself), QNL (the '\\n' after a '?': the
             question line's end; the answer prefix and the answers follow)
  L1 A       DW (the word just ended contains a '-': a key), D2A/D2B (the two characters before
             that '-'), AR (the nearest '\\n' is QNL: answer region), AR2 (the nearest ':' or
             '\\n' is a ':'), NC (uniform over position 0 and every ':': 1 / (1 + colons so far))
  L1 M       KE (key end: ' ' or ',' after a dashed word), KE_AR (a key end in the answer region:
             an asked key), QCOLON (the answer's ':'), COMMA_ANS (a ',' between answers), NORD
             (one-hot: colons so far, 1-4: at a needle, its ordinal)
  L2 A       LC (uniform over QNL and the asked keys: which asked key this is), AC (uniform
             over QCOLON and COMMA_ANS: which answer this is), KC (the 48 key codes 3 back: at a
             needle's ':' of "KEY is:", its key)
  L2 M       LORD (one-hot list position of an asked key), AORD (one-hot answer index), VCODE
             (CODE, 0 in the answer region: what the copy head may copy), NORDC (NORD at ':')
  L3 A       SEL (at an asked key, the ordinal of the needle whose KC equals its own key codes;
             needles of one key share it), NORDV (inside a needle's value its ordinal: the
             nearest of ':' and the sentence ends is a ':'; else 0)
  L4 A       ASEL: at an answer, SEL of the asked key whose list position is the answer index
             (the only asked key for single, multikey, multivalue; the i-th for multiquery)
  L5 A       copy head -> COPY: the code of the character that continues the answer; the
             untied LM head decodes COPY by the character codes.
Copy score: ASEL . NORDV (the asked needle's value) + AORD . NORDV (the i-th needle: multivalue
lists same-key needles in document order) + a value-start match (an answer starts after ': '
or ', ' where a value starts after ': ') + the codes of the last four tokens against the four
before the key position (an answer's ',' read as ':') + a digit bonus where no ':' precedes
(passkey, whose haystack says "is blue") + gates: active in the answer region except on ':'
and ',' (the trained model writes the ' '), idle elsewhere (it attends to the code-less tokens,
which copy nothing).
Which heads need full attention (by construction): L1 KV 1 (AR, up to ~200 tokens back), L1 KV
2 (NC, the whole text), L2 KV 1 (LC/AC, the answer region), L3 KV 0 (SEL, needles anywhere),
L4 KV 0 (ASEL, up to ~170 back), L5 KV 0 (copy). Local: L0 KV 0-1 (offsets 1-4), L1 KV 0 (DW/D2:
13 back), L2 KV 0 (KC: 3 back), L3 KV 1 (NORDV: 41 back). The other 21 KV heads are trained.
"""
import math

import torch

from .circuit_parts import (BOUNDARY, CODE_DIM, CONTENT, HEAD_DIM, K_ANCHOR, M, Builder, Head, Layout,
                           Mlp, char_codes, offset_phase, pair_dims)

LAYOUT = Layout([
    ("MARK", 1), ("CODE", 8), ("COLON", 1), ("COMMA", 1), ("SPCOM", 1), ("BOUND", 1), ("NL", 1),
    ("QMARK", 1), ("PERIOD", 1), ("UPPER", 1), ("DASH", 1), ("DIGIT", 1), ("NOCODE", 1),
    ("P1", 8), ("P1_DASH", 1), ("P1_BOUND", 1), ("P1_QMARK", 1), ("P1_UPPER", 1), ("P1_COMMA", 1), ("P1_COLON", 1),
    ("P2", 8), ("P2_COMMA", 1), ("P2_COLON", 1), ("P3", 8), ("P3_COMMA", 1), ("P4", 8), ("F0", 1), ("QNL", 1),
    ("DW", 1), ("D2A", 8), ("D2B", 8), ("AR", 1), ("AR2", 1), ("NC_X", 1), ("NC_Y", 1),
    ("KE", 1), ("KE_AR", 1), ("QCOLON", 1), ("COMMA_ANS", 1), ("NORD", 4),
    ("LC_X", 1), ("LC_Y", 1), ("AC_X", 1), ("AC_Y", 1), ("KC", 48),
    ("LORD", 4), ("AORD", 4), ("VCODE", 8), ("NORDC", 4),
    ("SEL", 4), ("NORDV", 4), ("ASEL", 4), ("COPY", 8),
])
KEY_CODES = ("P1", "P2", "P3", "P4", "D2A", "D2B")  # a key, seen from its end: 6 codes = 48 dims
CIRCUIT_DIMS = LAYOUT.size
CIRCUIT_LAYERS = 6
# (layer, KV head) of the frozen heads
FROZEN_HEADS = ((0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (3, 0), (3, 1), (4, 0), (5, 0))
# Recency profiles {pair: (cos weight, sin weight)} of the "nearest member" heads, solved once
# by circuit_parts.solve_profile for the (near, gap) constraints beside them (margins 10-13
# nats; tests re-check them with profile_margin).
PROFILES = {
    "DW": ([(13, 4)], {1: (15.8667, 1.0138), 2: (40.9164, -28.7824), 3: (36.7619, -43.6819),
                       4: (49.4796, -70.3350)}),
    "AR": ([(25, 22), (200, 70)], {2: (6.2649, -6.4212), 3: (52.3610, -30.0298), 4: (55.5384, -87.0877)}),
    "AR2": ([(40, 40), (160, 60)], {2: (2.8004, -2.1391), 3: (40.0833, -23.9585), 4: (38.4517, -53.4397)}),
    "NORDV": ([(41, 25), (100, 8)], {1: (0.4679, -0.7190), 2: (18.8989, 0.9349), 3: (125.1495, -194.6641),
                                     4: (165.4238, -274.5428)}),
}
ORD_THRESHOLDS = (0.75, 0.417, 0.292, 0.225, 0.183)  # between 1/(1+n) for n = 0..5


def calib_text():
    """A fixed text with the structures the circuit reads (needles, UUIDs, questions, answers,
    passkey): the residual's RMS and the signatures' means are measured on it."""
    hay = ("The grass is green. The sky is blue. Child hill cat in at writes horse soon table in she "
           "told. Soon long then builds saw teacher letter found into brings slowly found. ")
    needle = "One of the special magic numbers for {} is: {}. "
    return ("Some special magic numbers are hidden within the following text. Make sure to memorize it. "
            "I will quiz you about the numbers afterwards.\n" + hay
            + needle.format("calm-fountain", "1234567") + hay
            + "One of the special magic uuids for 3f2a9c1e-77b0-4d21-9a5e-c03b8e61d7f4 is: "
              "8d0e6a3f-1c2b-4e5d-a6f7-0b1c2d3e4f50. " + hay
            + needle.format("amber-castle", "7654321") + hay
            + "The pass key is 48213. Remember it. 48213 is the pass key. " + hay
            + "\nWhat are all the special magic numbers for calm-fountain, and amber-castle mentioned "
              "in the provided text?\nThe special magic numbers for calm-fountain, and amber-castle "
              "mentioned in the provided text are: 1234567, 7654321")


class Circuit(Builder):
    def __init__(self, model, gen):
        super().__init__(model, LAYOUT, calib_text())
        self.codes = char_codes(gen)

    # ---------------------------------------------------------------- embedding
    @torch.no_grad()
    def embed(self):
        E, L = self.m.embed_tokens.weight, self.L
        E[:, L.b:] = 0
        for t in range(E.shape[0]):
            E[t, L("MARK")] = M
            ch = chr(t) if t < 128 else None
            if ch is not None and ch in self.codes:
                E[t, L.span("CODE")] = self.codes[ch].to(E.dtype)
            else:
                E[t, L("NOCODE")] = 1
            flags = {"COLON": ch == ":", "COMMA": ch == ",", "SPCOM": ch in (" ", ","),
                     "BOUND": ch is not None and ch in BOUNDARY, "NL": ch == "\n", "QMARK": ch == "?", "PERIOD": ch == ".",
                     "UPPER": ch is not None and ch.isupper(), "DASH": ch == "-",
                     "DIGIT": ch is not None and ch.isdigit()}
            for name, on in flags.items():
                if on:
                    E[t, L(name)] = 1

    # ---------------------------------------------------------------- the layers
    @torch.no_grad()
    def layer0(self):
        L = self.L
        x, _ = self.trace(0)
        rms = self.rms(x)
        A0 = 28.0
        for kv, offsets in ((0, (1, 2)), (1, (3, 4))):
            h = self.head(0, kv)
            for p in range(4):
                h.key(pair_dims(p)[0], self.mark(1.0))
            for t, off in enumerate(offsets):
                for p in range(4):
                    a, b = offset_phase(p, off)
                    h.query(t, pair_dims(p)[0], self.mark(A0 * a))
                    h.query(t, pair_dims(p)[1], self.mark(A0 * b))
            for i, r in enumerate(self.code_reads("CODE")):
                h.value(i, r)
            for i, n in enumerate(("DASH", "BOUND", "QMARK", "UPPER", "COMMA", "COLON")):
                h.value(CODE_DIM + i, self.f(n))
            outs = {(0, 1): ["P1"], (0, 2): ["P2"], (1, 3): ["P3"], (1, 4): ["P4"]}
            for t, off in enumerate(offsets):
                name = outs[(kv, off)][0]
                for i in range(CODE_DIM):
                    h.out(t, i, L(name, i), rms)
                if name == "P1":
                    for i, n in enumerate(("P1_DASH", "P1_BOUND", "P1_QMARK", "P1_UPPER", "P1_COMMA",
                                           "P1_COLON")):
                        h.out(t, CODE_DIM + i, L(n), rms)
                if name in ("P2", "P3"):
                    h.out(t, CODE_DIM + 4, L(name + "_COMMA"), rms)
                if name == "P2":
                    h.out(t, CODE_DIM + 5, L("P2_COLON"), rms)
        dims = [d for p in range(4) for d in pair_dims(p)]
        # logit = 8 g^2 (q.k)/(|q||k|) with |q| = 2 A0, |k| = 2: g^2 = A0 / 2 gives logit = A0 sum cos
        self.set_gains(0, dims, math.sqrt(A0 / 2.0))
        _, xm = self.trace(0)
        rm = self.rms(xm)
        mlp = Mlp(self.m.layers[0].mlp)
        self.and_gate(mlp, ["UPPER", "P1_UPPER"], "F0", rm)
        self.and_gate(mlp, ["NL", "P1_QMARK"], "QNL", rm)
        self.mlp_used[0] = mlp.used

    @torch.no_grad()
    def layer1(self):
        L = self.L
        x, _ = self.trace(1)
        rms = self.rms(x)
        gain = 1.0
        gate_a, gate_b, gate_c, gate_d = CONTENT[0], CONTENT[1], CONTENT[2], CONTENT[3]
        prof_dw, prof_ar, prof_ar2 = (PROFILES[n][1] for n in ("DW", "AR", "AR2"))
        heads = []
        # KV 0: DW (nearest boundary-or-dash before the word) and D2 (nearest dash)
        h = self.head(1, 0)
        bound_or_dash = self.plus(self.f("P1_BOUND"), self.f("P1_DASH"))
        h.key(gate_a, {k: gain * v for k, v in bound_or_dash.items()})
        h.key(gate_b, self.f("P1_DASH", gain))
        h.key(gate_c, self.f("P1_BOUND", gain))      # equal key norms for both member kinds
        h.key(K_ANCHOR, self.mark(0.05))
        for p in prof_dw:
            h.key(pair_dims(p)[0], bound_or_dash)
        q_gate = 3 * sum(abs(a) + abs(s) for a, s in prof_dw.values())
        for t, gdim in ((0, gate_a), (1, gate_b)):
            h.query(t, gdim, self.mark(q_gate))
            for p, (a, s) in prof_dw.items():
                h.query(t, pair_dims(p)[0], self.mark(a))
                h.query(t, pair_dims(p)[1], self.mark(-s))
        h.value(0, self.f("P1_DASH"))
        for i in range(CODE_DIM):
            h.value(1 + i, self.f("P2", 1.0, i))
            h.value(1 + CODE_DIM + i, self.f("P3", 1.0, i))
        h.out(0, 0, L("DW"), rms)
        for i in range(CODE_DIM):
            h.out(1, 1 + i, L("D2A", i), rms)
            h.out(1, 1 + CODE_DIM + i, L("D2B", i), rms)
        heads.append((h, (0, 1), bound_or_dash))
        # KV 1: AR (nearest '\n' is QNL) and AR2 (nearest ':' or '\n' is ':')
        h = self.head(1, 1)
        nl_or_colon = self.plus(self.f("NL"), self.f("COLON"))
        h.key(gate_a, self.f("NL", gain))
        h.key(gate_b, {k: gain * v for k, v in nl_or_colon.items()})
        h.key(gate_c, self.f("COLON", gain))
        h.key(K_ANCHOR, self.mark(0.05))
        for p in (2, 3, 4):
            h.key(pair_dims(p)[0], nl_or_colon)
        for t, gdim, prof in ((0, gate_a, prof_ar), (1, gate_b, prof_ar2)):
            h.query(t, gdim, self.mark(3 * sum(abs(a) + abs(s) for a, s in prof.values())))
            for p, (a, s) in prof.items():
                h.query(t, pair_dims(p)[0], self.mark(a))
                h.query(t, pair_dims(p)[1], self.mark(-s))
        h.value(0, self.f("QNL"))
        h.value(1, self.f("COLON"))
        h.out(0, 0, L("AR"), rms)
        h.out(1, 1, L("AR2"), rms)
        heads.append((h, (0, 1), nl_or_colon))
        # KV 2: uniform over position 0 and the colons: 1 / (1 + colons so far)
        h = self.head(1, 2)
        first_or_colon = self.plus(self.f("F0"), self.f("COLON"))
        h.key(gate_d, first_or_colon)
        h.key(K_ANCHOR, self.mark(0.05))
        h.query(0, gate_d, self.mark(40.0))
        h.value(0, self.f("F0"))
        h.value(1, first_or_colon)
        h.out(0, 0, L("NC_X"), rms)
        h.out(0, 1, L("NC_Y"), rms)
        heads.append((h, (0,), first_or_colon))
        g = self.scale_heads(1, heads)
        dims = sorted({d for hh, _, _ in heads for d in hh.used_dims()})
        self.set_gains(1, dims, g)
        # MLP
        _, xm = self.trace(1)
        rm = self.rms(xm)
        mlp = Mlp(self.m.layers[1].mlp)
        self.and_gate(mlp, ["SPCOM", "DW"], "KE", rm)
        self.and_gate(mlp, ["SPCOM", "DW", "AR"], "KE_AR", rm)
        self.and_gate(mlp, ["COLON", "AR"], "QCOLON", rm)
        self.and_gate(mlp, ["COMMA", "AR", "AR2"], "COMMA_ANS", rm)
        self.ratio_steps(mlp, "NC_X", "NC_Y", ORD_THRESHOLDS, [("NORD", i) for i in range(4)], rm)
        self.mlp_used[1] = mlp.used

    @torch.no_grad()
    def layer2(self):
        L = self.L
        x, _ = self.trace(2)
        rms = self.rms(x)
        gate_a, gate_b, gate_c, gate_d = CONTENT[0], CONTENT[1], CONTENT[2], CONTENT[3]
        h = self.head(2, 1)   # LC, AC: counts
        sa = self.plus(self.f("QNL"), self.f("KE_AR"))
        sb = self.plus(self.f("QCOLON"), self.f("COMMA_ANS"))
        h.key(gate_a, sa)
        h.key(gate_d, sa)
        h.key(gate_b, sb)
        h.key(gate_c, sb)
        h.key(K_ANCHOR, self.mark(0.05))
        h.query(0, gate_a, self.mark(40.0))
        h.query(1, gate_b, self.mark(40.0))
        h.value(0, self.f("QNL"))
        h.value(1, sa)
        h.value(2, self.f("QCOLON"))
        h.value(3, sb)
        h.out(0, 0, L("LC_X"), rms)
        h.out(0, 1, L("LC_Y"), rms)
        h.out(1, 2, L("AC_X"), rms)
        h.out(1, 3, L("AC_Y"), rms)
        heads = [(h, (0, 1), self.plus(sa, sb))]
        # KC: the key codes 3 back (at a needle's ':' of "KEY is:", its key)
        h = self.head(2, 0)
        self.offset_head(h, 0, 3)
        for j, (name, i) in enumerate((n, i) for n in KEY_CODES for i in range(CODE_DIM)):
            h.value(j, self.f(name, 1.0, i))
            h.out(0, j, L("KC", j), rms)
        heads.append((h, (0,), {}))
        g = self.scale_heads(2, heads)
        self.set_gains(2, sorted({d for hh, _, _ in heads for d in hh.used_dims()}), g)
        _, xm = self.trace(2)
        rm = self.rms(xm)
        mlp = Mlp(self.m.layers[2].mlp)
        self.ratio_steps(mlp, "LC_X", "LC_Y", ORD_THRESHOLDS, [("LORD", i) for i in range(4)], rm,
                         enable="KE_AR")
        self.ratio_steps(mlp, "AC_X", "AC_Y", ORD_THRESHOLDS[:4], [("AORD", i) for i in range(4)], rm)
        A = 20.0 * rm
        for i in range(CODE_DIM):  # VCODE = CODE outside the answer region
            for sgn in (1.0, -1.0):
                gate = self.plus(self.f("CODE", sgn * A, i), self.f("AR", -4.0 * A))
                mlp.neuron(gate, self.mark(1.0), {L("VCODE", i): sgn * rm ** 2 / A})
        for i in range(4):  # NORDC: a ':''s ordinal, 0 elsewhere
            self.and_gate(mlp, [("NORD", i), "COLON"], ("NORDC", i), rm)
        self.mlp_used[2] = mlp.used

    @torch.no_grad()
    def layer3(self, w_match=15.0):
        L = self.L
        x, _ = self.trace(3)
        rms = self.rms(x)
        gain = 10.0
        # SEL: at an asked key, the ordinal of the needle whose key (KC at its ':') is the same
        h = self.head(3, 0)
        dims = iter(CONTENT)
        gate, dummy = next(dims), next(dims)
        h.key(gate, self.plus(self.f("COLON", gain), self.f("AR", -gain)))
        h.key(dummy, self.plus(self.mark(gain), self.f("COLON", -gain)))
        h.query(0, gate, self.mark(20.0))
        for j, (name, i) in enumerate((n, i) for n in KEY_CODES for i in range(CODE_DIM)):
            d = next(dims)
            h.key(d, self.f("KC", 1.0, j))
            h.query(0, d, self.f(name, w_match, i))
        for i in range(4):
            h.value(i, self.f("NORD", 1.0, i))
            h.out(0, i, L("SEL", i), rms)
        heads = [(h, (0,), self.plus(self.f("COLON"), self.f("AR", -1.0)))]
        # NORDV: inside a needle's value the needle's ordinal (nearest of ':' and the sentence
        # ends '.' '?' '\n' is a ':'), else 0
        prof = PROFILES["NORDV"][1]
        h = self.head(3, 1)
        mem = self.plus(self.f("COLON"), self.f("PERIOD"), self.f("QMARK"), self.f("NL"))
        self.nearest_head(h, 0, CONTENT[0], mem, prof)
        h.key(K_ANCHOR, self.mark(0.05))
        for i in range(4):
            h.value(i, self.f("NORDC", 1.0, i))
            h.out(0, i, L("NORDV", i), rms)
        heads.append((h, (0,), mem))
        g = self.scale_heads(3, heads)
        self.set_gains(3, sorted({d for hh, _, _ in heads for d in hh.used_dims()}), g)

    @torch.no_grad()
    def layer4(self):
        """ASEL: at an answer, SEL of the asked key whose list position is the answer index."""
        L = self.L
        x, _ = self.trace(4)
        rms = self.rms(x)
        gate_a = CONTENT[0]
        h = self.head(4, 0)
        h.key(gate_a, self.f("KE_AR"))
        h.key(K_ANCHOR, self.mark(0.05))
        for i in range(4):
            h.key(CONTENT[2 + i], self.f("LORD", 1.0, i))
        h.query(0, gate_a, self.mark(120.0))
        for i in range(4):
            h.query(0, CONTENT[2 + i], self.f("AORD", 20.0, i))
        for i in range(4):
            h.value(i, self.f("SEL", 1.0, i))
            h.out(0, i, L("ASEL", i), rms)
        g = self.scale_heads(4, [(h, (0,), self.f("KE_AR"))])
        self.set_gains(4, sorted(h.used_dims()), g)

    @torch.no_grad()
    def layer5(self, w_gate=20.0, w_sink=20.0, w_digit=12.0, w_key=40.0, w_ord=10.0, w_ctx=15.0, w_vstart=40.0):
        L = self.L
        h = self.head(5, 0)
        dims = iter(CONTENT)
        gate, digit = next(dims), next(dims)
        sink = pair_dims(5)[0]
        gain = 10.0
        # keys
        h.key(gate, self.plus(self.mark(gain), self.f("AR", -gain)))
        h.key(pair_dims(5)[1], self.f("AR", gain))   # answer-region keys: same norm, no gate
        h.key(sink, self.f("NOCODE", gain))
        h.key(digit, self.f("DIGIT"))
        vstart = next(dims)
        sel_dims = [next(dims) for _ in range(4)]
        ord_dims = [next(dims) for _ in range(4)]
        ctx_dims = [[next(dims) for _ in range(CODE_DIM)] for _ in range(4)]
        # an answer starts (after ': ' or ', ') where a value starts (after ': ')
        h.key(vstart, self.f("P2_COLON"))
        h.query(0, vstart, self.plus(self.f("P1_COLON", w_vstart), self.f("P1_COMMA", w_vstart)))
        for i, d in enumerate(sel_dims):
            h.key(d, self.f("NORDV", 1.0, i))
            h.query(0, d, self.f("ASEL", w_key, i))
        for i, d in enumerate(ord_dims):
            h.key(d, self.f("NORDV", 1.0, i))
            h.query(0, d, self.f("AORD", w_ord, i))
        # after an answer's ',' the query reads the previous token as ':' (a value start)
        colon_for_comma = self.codes[":"] - self.codes[","]
        for (qsrc, ksrc), ds in zip((("CODE", "P1"), ("P1", "P2"), ("P2", "P3"), ("P3", "P4")), ctx_dims):
            for i, d in enumerate(ds):
                h.key(d, self.f(ksrc, 1.0, i))
                h.query(0, d, self.f(qsrc, w_ctx, i))
                if qsrc in ("P1", "P2", "P3"):
                    h.query(0, d, self.f(qsrc + "_COMMA", w_ctx * float(colon_for_comma[i])))
        # query gates: active in the answer region but on ':' and ','; idle -> the code-less sink
        h.query(0, gate, self.plus(self.f("AR", w_gate), self.f("COLON", -w_gate), self.f("COMMA", -w_gate)))
        h.query(0, sink, self.plus(self.mark(w_sink), self.f("AR", -w_sink), self.f("COLON", w_sink),
                               self.f("COMMA", w_sink)))
        h.query(0, digit, self.plus(self.f("AR", w_digit), self.f("AR2", -w_digit)))
        for i in range(CODE_DIM):
            h.value(i, self.f("VCODE", 1.0, i))
            h.out(0, i, L("COPY", i), 1.0)
        g = self.scale_heads(5, [(h, (0,), {})])
        self.set_gains(5, sorted(h.used_dims()), g)

    @torch.no_grad()
    def finish(self, copy_logit=40.0):
        """Norm gains of the reserved block fixed at 1, trainable writers kept off it, the LM
        head's reserved columns: COPY decoded by the character codes."""
        m, L = self.m, self.L
        b = L.b
        for lay in m.layers:
            lay.input_layernorm.weight[b:] = 1
            lay.post_attention_layernorm.weight[b:] = 1
        m.norm.weight[b:] = 1
        # copy strength: COPY as the final norm sees it on the calibration text's answer
        x, _ = self.trace_final()
        xn = m.norm(x).double()
        copy = xn[:, L.span("COPY")]
        top = float(copy.norm(dim=1).max())
        W = m.lm_head.weight
        W[:, b:] = 0
        for ch, code in self.codes.items():
            W[ord(ch), L.span("COPY")] = (copy_logit / max(top, 1e-6) * code).to(W.dtype)

def check_shape(c):
    rep = c.num_attention_heads // c.num_key_value_heads
    problems = []
    if c.head_dim != HEAD_DIM:
        problems.append(f"head_dim {c.head_dim} (needs {HEAD_DIM})")
    if c.rope_theta != 1e24:
        problems.append(f"rope_theta {c.rope_theta:g} (needs 1e24)")
    if c.num_hidden_layers < CIRCUIT_LAYERS + 1 or c.num_key_value_heads < 4 or rep != 2:
        problems.append(f"{c.num_hidden_layers} layers x {c.num_key_value_heads} KV heads x {rep} "
                        f"query heads each (needs >= {CIRCUIT_LAYERS + 1} layers, >= 4 KV heads, 2 each)")
    if c.hidden_size < CIRCUIT_DIMS + 32:
        problems.append(f"hidden_size {c.hidden_size} (needs >= {CIRCUIT_DIMS + 32})")
    if c.tie_word_embeddings:
        problems.append("tied embeddings (needs an untied LM head)")
    if problems:
        raise ValueError("the retrieval circuit does not fit this shape: " + "; ".join(problems)
                         + "; use --no-induction-init")


@torch.no_grad()
def implant_circuit(model, gen):
    """Builds the circuit into `model` (in place); returns the Circuit (layout, codes, gains)."""
    check_shape(model.c)
    cir = Circuit(model, gen)
    b = cir.L.b
    for lay in model.layers:  # trainable writers never touch the reserved block
        lay.self_attn.o_proj.weight[b:] = 0
        lay.mlp.down_proj.weight[b:] = 0
    cir.embed()
    for lay in model.layers:
        lay.input_layernorm.weight[b:] = 1
        lay.post_attention_layernorm.weight[b:] = 1
    cir.layer0()
    cir.layer1()
    cir.layer2()
    cir.layer3()
    cir.layer4()
    cir.layer5()
    cir.finish()
    x, _ = cir.trace_final()
    g = cir.rms(x)   # trainable coordinates enter the norms at ~unit scale, like a plain model
    for lay in model.layers:
        lay.input_layernorm.weight[:b] = g
        lay.post_attention_layernorm.weight[:b] = g
    model.norm.weight[:b] = g
    frozen = {(l, kv) for l, kv in FROZEN_HEADS}
    for layer, g in cir.gains.items():  # trainable heads of circuit layers 1-4 keep off its dims
        if layer == 0:
            continue
        dims = sorted(g)
        a = model.layers[layer].self_attn
        for kv in range(model.c.num_key_value_heads):
            if (layer, kv) in frozen:
                continue
            h = Head.__new__(Head)
            h.attn, h.kv, h.rep, h.hd = a, kv, cir.rep, HEAD_DIM
            h.k_rows()[dims] = 0
            for t in range(cir.rep):
                h.q_rows(t)[dims] = 0
    return cir


def circuit_dims(model, layer):
    """Head dims the frozen heads of `layer` use (their q/k norm gains are the circuit's)."""
    c = model.c
    rep = c.num_attention_heads // c.num_key_value_heads
    a = model.layers[layer].self_attn
    dims = set()
    for lay, kv in FROZEN_HEADS:
        if lay != layer:
            continue
        rows = [a.k_proj.weight[kv * HEAD_DIM:(kv + 1) * HEAD_DIM]]
        rows += [a.q_proj.weight[h * HEAD_DIM:(h + 1) * HEAD_DIM] for h in range(kv * rep, (kv + 1) * rep)]
        for r in rows:
            dims |= {int(i) for i in torch.nonzero(r.abs().sum(1)).flatten()}
    return sorted(dims)


def frozen_masks(model):
    """{parameter name: bool mask} of everything train.py keeps at its built value: the frozen
    heads (q, k, v rows, o columns), the circuit's MLP neurons (the ones that write the reserved
    block), every writer's reserved rows (zero for trainable heads and neurons), the q/k gains
    of the circuit's dims and, in layers 1-5, the trainable heads' q/k rows there (so they keep
    to the dims whose gains train), the reserved columns of the embedding and LM head, and the
    norms' gains on the reserved block. Derived from the weights: works on a loaded model."""
    c = model.c
    rep, d = c.num_attention_heads // c.num_key_value_heads, c.hidden_size
    b = d - CIRCUIT_DIMS
    params = dict(model.named_parameters())
    masks = {n: torch.zeros_like(p, dtype=torch.bool) for n, p in params.items()}
    frozen = set(FROZEN_HEADS)
    for layer in range(c.num_hidden_layers):
        at = f"layers.{layer}."
        for n in ("self_attn.o_proj.weight", "mlp.down_proj.weight"):
            masks[at + n][b:] = True
        for n in ("input_layernorm.weight", "post_attention_layernorm.weight"):
            masks[at + n][b:] = True
        if layer >= CIRCUIT_LAYERS:
            continue
        dims = circuit_dims(model, layer)
        for n in ("self_attn.q_norm.weight", "self_attn.k_norm.weight"):
            masks[at + n][dims] = True
        for kv in range(c.num_key_value_heads):
            qrows = slice(kv * rep * HEAD_DIM, (kv + 1) * rep * HEAD_DIM)
            krows = slice(kv * HEAD_DIM, (kv + 1) * HEAD_DIM)
            if (layer, kv) in frozen:
                masks[at + "self_attn.q_proj.weight"][qrows] = True
                masks[at + "self_attn.k_proj.weight"][krows] = True
                masks[at + "self_attn.v_proj.weight"][krows] = True
                masks[at + "self_attn.o_proj.weight"][:, qrows] = True
            elif layer > 0:
                for t in range(rep):
                    h = kv * rep + t
                    masks[at + "self_attn.q_proj.weight"][[h * HEAD_DIM + i for i in dims]] = True
                masks[at + "self_attn.k_proj.weight"][[kv * HEAD_DIM + i for i in dims]] = True
        down = params[at + "mlp.down_proj.weight"]
        neurons = torch.nonzero(down[b:].abs().sum(0)).flatten()
        masks[at + "mlp.gate_proj.weight"][neurons] = True
        masks[at + "mlp.up_proj.weight"][neurons] = True
        masks[at + "mlp.down_proj.weight"][:, neurons] = True
    masks["embed_tokens.weight"][:, b:] = True
    if "lm_head.weight" in masks:
        masks["lm_head.weight"][:, b:] = True
    masks["norm.weight"][b:] = True
    return {n: m for n, m in masks.items() if m.any()}
