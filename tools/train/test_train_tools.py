#!/usr/bin/python3
"""Tests of the trainer's pieces: /usr/bin/python3 -m unittest discover -s tools/train -p 'test_*.py'
(about 10 s on 2 cores). The JavaScript check runs when node and @lenml/tokenizers are found
(NODE_PATH, default /tmp/jsref/node_modules), else it is skipped with a message."""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import byte_tokenizer as bt  # noqa: E402
import data  # noqa: E402
import export  # noqa: E402
from model import (Qwen3, Qwen3Config, RMSNorm, apply_rope, grouped_attention,  # noqa: E402
                   plan_masks, reference_attention, rope_cos_sin)
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402

torch.set_num_threads(2)
TEXTS = ["Hello, world!", "ü€𝄞 naïve 日本語", "<|im_start|>user\nhi<|im_end|>\n", "a<|endoftext|>b",
         "<|im_start", "\x00\x01\x7f tab\t cr\r\n", " leading  spaces ", ""]


def tiny_config(**kw):
    c = dict(vocab_size=bt.VOCAB_SIZE, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, head_dim=16, rope_theta=1e6)
    c.update(kw)
    return Qwen3Config(**c)


def random_model(cfg, seed=0):
    m = Qwen3(cfg)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in m.parameters():  # norms not all ones, so a skipped norm is caught
            p.copy_(1 + 0.3 * torch.randn(p.shape, generator=g) if p.dim() == 1
                    else 0.2 * torch.randn(p.shape, generator=g))
    return m.eval()


class TokenizerTest(unittest.TestCase):
    def test_roundtrip_and_specials(self):
        for t in TEXTS:
            self.assertEqual(bt.decode(bt.encode(t)), t)
        self.assertEqual(bt.encode("ab"), [97, 98])
        self.assertEqual(bt.encode("é"), [0xC3, 0xA9])
        self.assertEqual(bt.encode("x<|im_end|>"), [120, 258])
        self.assertEqual(bt.encode("<|im_start"), list(b"<|im_start"))

    def test_offsets_are_byte_offsets(self):
        ids, starts = bt.encode_with_offsets("é<|endoftext|>z")
        self.assertEqual(ids, [0xC3, 0xA9, 256, ord("z")])
        self.assertEqual(starts, [0, 1, 2, 2 + len("<|endoftext|>")])

    def test_tokenizer_json(self):
        j = bt.tokenizer_json()
        vocab = j["model"]["vocab"]
        self.assertEqual(len(vocab), bt.VOCAB_SIZE)
        self.assertEqual(sorted(vocab.values()), list(range(bt.VOCAB_SIZE)))
        self.assertEqual(j["model"]["merges"], [])
        self.assertEqual(vocab["Ġ"], 32)  # GPT-2 byte symbol of the space
        self.assertEqual(vocab["!"], 33)
        self.assertEqual(len(set(bt.BYTE_TO_CHAR.values())), 256)

    def test_shipped_tokenizer_is_current(self):
        path = os.path.join(HERE, "..", "..", "models", "default", "tokenizer.json")
        if not os.path.exists(path):
            self.skipTest("models/default/tokenizer.json not written yet")
        with open(path, encoding="utf-8") as f:
            self.assertEqual(json.load(f), bt.tokenizer_json())

    def test_javascript_reference_agrees(self):
        node_path = os.environ.get("NODE_PATH", "/tmp/jsref/node_modules")
        if not shutil.which("node") or not os.path.isdir(os.path.join(node_path, "@lenml", "tokenizers")):
            self.skipTest(f"node or @lenml/tokenizers under {node_path} missing "
                          "(cd /tmp/jsref && npm install @lenml/tokenizers)")
        with tempfile.TemporaryDirectory() as d:
            bt.write_tokenizer_files(d)
            texts = TEXTS + ["".join(chr(c) for c in range(1, 300)), "key-7f3a=91520; " * 300]
            cases = [{"text": t, "ids": bt.encode(t)} for t in texts]
            with open(os.path.join(d, "cases.json"), "w") as f:
                json.dump(cases, f)
            r = subprocess.run(["node", os.path.join(HERE, "check_tokenizer_js.cjs"), d,
                                os.path.join(d, "cases.json")], capture_output=True, text=True,
                               env=dict(os.environ, NODE_PATH=node_path), timeout=60)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr[-2000:])


class SafetensorsTest(unittest.TestCase):
    def test_roundtrip_and_layout(self):
        t = {"b.w": np.arange(6, dtype=np.float32).reshape(2, 3), "a": np.array([1.5], np.float32),
             "h": np.array([0.5, -2], np.float16)}
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "x.safetensors")
            write_safetensors(p, t, {"k": "v"})
            with open(p, "rb") as f:
                raw = f.read()
            (n,) = struct.unpack("<Q", raw[:8])
            self.assertEqual(n % 8, 0)
            header = json.loads(raw[8:8 + n])
            self.assertEqual(header["b.w"], {"dtype": "F32", "shape": [2, 3], "data_offsets": [4, 28]})
            self.assertEqual(header["__metadata__"], {"k": "v"})
            self.assertEqual(len(raw), 8 + n + 4 + 24 + 4)
            back, meta = read_safetensors(p)
            for k in t:
                np.testing.assert_array_equal(back[k], t[k])


class ModelTest(unittest.TestCase):
    def test_rmsnorm_formula(self):
        n = RMSNorm(4, 1e-6)
        with torch.no_grad():
            n.weight.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]))
        x = torch.tensor([[1.0, -2.0, 3.0, -4.0]])
        rms = math.sqrt((1 + 4 + 9 + 16) / 4 + 1e-6)
        torch.testing.assert_close(n(x), torch.tensor([[1 / rms, -4 / rms, 9 / rms, -16 / rms]]))

    def test_rope_is_rotate_half_and_relative(self):
        cos, sin = rope_cos_sin(8, 4, 100.0)
        x = torch.tensor([1.0, 2.0, 3.0, 4.0])
        p = 3
        f = [p * 100.0 ** (-0.0), p * 100.0 ** (-0.5)]  # inv_freq = theta^(-2i/hd)
        want = torch.tensor([1 * math.cos(f[0]) - 3 * math.sin(f[0]), 2 * math.cos(f[1]) - 4 * math.sin(f[1]),
                             3 * math.cos(f[0]) + 1 * math.sin(f[0]), 4 * math.cos(f[1]) + 2 * math.sin(f[1])])
        torch.testing.assert_close(apply_rope(x.view(1, 1, 1, 4).expand(1, 1, 8, 4), cos, sin)[0, 0, p], want)

    def test_grouped_attention_matches_reference(self):
        g = torch.Generator().manual_seed(1)
        B, H, Hk, L, hd = 2, 8, 4, 23, 16
        q, k, v = (torch.randn(B, h, L, hd, generator=g) for h in (H, Hk, Hk))
        plan = {(0, 1): (5, 2), (0, 3): (1, 0)}
        masks = plan_masks(plan, L, 1, Hk)[0]
        i, j = torch.arange(L).view(L, 1), torch.arange(L).view(1, L)
        vis = []
        for h in range(Hk):
            w, s = plan.get((0, h), (L + 1, 0))
            vis.append((j <= i) & (((i - j) < w) | (j < s)))
        want = reference_attention(q, k, v, vis, 0.25)
        for chunk in (0, 4, 7, 64):
            torch.testing.assert_close(grouped_attention(q, k, v, masks, 0.25, chunk), want)
        full = torch.full((L, L), float("-inf")).triu(1)
        want_full = reference_attention(q, k, v, [j <= i] * Hk, 0.25)
        torch.testing.assert_close(grouped_attention(q, k, v, full, 0.25, 5), want_full)
        for chunk in (0, 5, 8, 64):  # mask None: causal, only the diagonal blocks masked
            torch.testing.assert_close(grouped_attention(q, k, v, None, 0.25, chunk), want_full)

    def test_forward_is_causal_and_chunk_independent(self):
        cfg = tiny_config()
        m = random_model(cfg)
        ids = torch.tensor([bt.encode("The quick brown fox jumps over the lazy dog")])
        with torch.no_grad():
            a = m(ids)
            m.c.attn_chunk = 5
            b = m(ids)
            prefix = m(ids[:, :10])
        torch.testing.assert_close(a, b)
        torch.testing.assert_close(a[:, :10], prefix, rtol=1e-4, atol=1e-5)

    def test_export_roundtrip_and_names(self):
        cfg = tiny_config()
        m = random_model(cfg)
        with tempfile.TemporaryDirectory() as d:
            export.export_model(m, d)
            with open(os.path.join(d, "config.json")) as f:
                c = json.load(f)
            self.assertEqual(c["architectures"], ["Qwen3ForCausalLM"])
            self.assertEqual(c["model_type"], "qwen3")
            self.assertEqual(c["vocab_size"], bt.VOCAB_SIZE)
            self.assertEqual(c["head_dim"], 16)
            self.assertTrue(c["tie_word_embeddings"])
            tensors, _ = read_safetensors(os.path.join(d, "model.safetensors"))
            want = {"model.embed_tokens.weight", "model.norm.weight"}
            for layer in range(2):
                p = f"model.layers.{layer}."
                want |= {p + s for s in (
                    "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
                    "self_attn.o_proj.weight", "self_attn.q_norm.weight", "self_attn.k_norm.weight",
                    "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight",
                    "input_layernorm.weight", "post_attention_layernorm.weight")}
            self.assertEqual(set(tensors), want)
            self.assertEqual(tensors["model.layers.0.self_attn.q_proj.weight"].shape, (64, 32))
            self.assertEqual(tensors["model.layers.0.self_attn.k_proj.weight"].shape, (32, 32))
            self.assertEqual(tensors["model.layers.0.self_attn.o_proj.weight"].shape, (32, 64))
            back = export.load_model_dir(d)
            ids = torch.tensor([bt.encode("round trip")])
            with torch.no_grad():
                torch.testing.assert_close(back(ids), m(ids))
            self.assertTrue(os.path.exists(os.path.join(d, "tokenizer.json")))


class DataTest(unittest.TestCase):
    def test_answer_spans_map_to_tokens(self):
        text = "é key=42 <|im_end|> 42"
        b = len("é key=".encode())
        s = data.parse_line(json.dumps({"text": text, "answer_spans": [[b, b + 2], [len(text.encode()) - 2, len(text.encode())]]}), "t")
        got = bt.decode([int(i) for i, a in zip(s.ids, s.answer) if a])
        self.assertEqual(got, "4242")

    def test_bad_lines_are_reported(self):
        with self.assertRaisesRegex(ValueError, "t:3: bad answer span"):
            data.parse_line(json.dumps({"text": "abc", "answer_spans": [[2, 9]]}), "t:3")
        with self.assertRaisesRegex(ValueError, "not JSON"):
            data.parse_line("{", "t:1")

    def test_batches_are_deterministic(self):
        samples = [data.Sample(np.arange(n, dtype=np.int64) % 256, np.zeros(n, bool)) for n in range(40, 70)]
        a = data.PhasePool(samples, 64, 0, 7).batch(5, 3, 256)
        b = data.PhasePool(samples, 64, 0, 7).batch(5, 3, 256)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
        inp, tgt, ans, valid = a
        np.testing.assert_array_equal(inp[:, 1:][valid[:, :-1]], tgt[:, :-1][valid[:, :-1]])


def needle_text(rng, n_needles=4, digits="0123456789"):
    """Four needles in the NIAH wording with distinct first characters and the question for one
    of them; returns (text, asked value)."""
    keys = ["brisk-crayon", "quiet-garden", "amber-castle", "sly-chimney", "odd-kettle",
            "calm-meadow", "bold-lantern", "shy-pepper"]
    ks = list(rng.choice(keys, size=n_needles, replace=False))
    firsts = rng.choice(list(digits[1:]), size=n_needles, replace=False)
    vals = [f + "".join(rng.choice(list(digits), size=6)) for f in firsts]
    text = "".join(f"The dog runs home. One of the special magic numbers for {k} is: {v}. "
                   for k, v in zip(ks, vals))
    ask = int(rng.integers(n_needles))
    text += (f"The cat sat.\nThe special magic number for {ks[ask]} mentioned in the "
             f"provided text is: ")
    return text, vals[ask]


def list_text(rng, n_needles=4, digits="0123456789", answered=True):
    """n needles of one key (multivalue wording) and the answer so far up to ", " after the
    first value; returns (text, the second value). answered=False: the text ends at "are: "
    and the first value is returned."""
    key = rng.choice(["brisk-crayon", "quiet-garden", "amber-castle", "odd-kettle"])
    firsts = rng.choice(list(digits[1:]), size=n_needles, replace=False)
    vals = [f + "".join(rng.choice(list(digits), size=6)) for f in firsts]
    fill = ["The dog runs home.", "A cat sat on the hill.", "Here we go again.", "The sky is blue."]
    text = "".join(f"{fill[i % 4]} One of the special magic numbers for {key} is: {v}. "
                   for i, v in enumerate(vals))
    text += f"The cat sat.\nThe special magic numbers for {key} mentioned in the provided text are: "
    if not answered:
        return text, vals[0]
    return text + f"{vals[0]}, ", vals[1]


class CircuitInitTest(unittest.TestCase):
    """The hand-built circuit copies repeated random strings and answers key-conditioned
    questions before any training; the plain init does neither."""

    def copy_accuracy(self, model):
        from circuit_init import CHARS
        rng = np.random.default_rng(5)
        ok = n = 0
        with torch.no_grad():
            for _ in range(30):
                words = ["".join(rng.choice(list(CHARS), size=int(rng.integers(6, 14)))) for _ in range(3)]
                first = " ".join(words) + " The dog runs home. "
                ids = torch.tensor([bt.encode(first + " ".join(words))])
                pred = model(ids[:, :-1])[0].argmax(-1)
                start = len(first.encode())
                for w in words:  # every character of a repeat after its first
                    for j in range(start + 1, start + len(w)):
                        ok += int(pred[j - 1] == ids[0, j])
                        n += 1
                    start += len(w) + 1
        return ok / n

    def config(self):
        return Qwen3Config()  # the default model's architecture

    def test_circuit_copies_and_plain_init_does_not(self):
        from circuit_init import implant_circuit
        plain = Qwen3(self.config())
        plain.init_weights(torch.Generator().manual_seed(0), qk_norm_init=1.5)
        self.assertLess(self.copy_accuracy(plain), 0.15)
        implant_circuit(plain, torch.Generator().manual_seed(1))
        # one to three characters of context vote; repeats in the context stay ambiguous
        self.assertGreater(self.copy_accuracy(plain), 0.4)
        with self.assertRaises(ValueError):
            implant_circuit(Qwen3(tiny_config()), torch.Generator().manual_seed(1))  # hidden 32

    def answer_prefix_accuracy(self, m, trials=24, n_chars=3):
        """Fraction of questions whose first n_chars value characters are each the argmax
        (teacher-forced), over texts from needle_text."""
        rng = np.random.default_rng(3)
        ok = 0
        with torch.no_grad():
            for _ in range(trials):
                text, val = needle_text(rng)
                ids = torch.tensor([bt.encode(text + val[:n_chars - 1])])
                pred = m(ids)[0, -n_chars:].argmax(-1).tolist()
                ok += int(pred == [ord(ch) for ch in val[:n_chars]])
        return ok / trials

    def circuit_model(self, **circuit_args):
        """The default architecture, seed-0 init, circuit implanted with seed 1."""
        from circuit_init import implant_circuit
        m = Qwen3(self.config())
        m.init_weights(torch.Generator().manual_seed(0), qk_norm_init=1.5)
        implant_circuit(m, torch.Generator().manual_seed(1), **circuit_args)
        return m

    def hex_block_list_accuracy(self, m, seed, answered, trials=24):
        """Fraction of list_text texts whose expected value's first three characters are each
        the argmax of the circuit's own logits (the hex block, what training starts from)."""
        from circuit_parts import CIRCUIT_DIMS, HEX, HEXB
        hb = m.c.hidden_size - CIRCUIT_DIMS + HEXB
        rng = np.random.default_rng(seed)
        ok = 0
        with torch.no_grad():
            for _ in range(trials):
                text, val = list_text(rng, answered=answered)
                ids = torch.tensor([bt.encode(text + val[:2])])
                hexlog = m(ids, return_hidden=True)[0, -3:, hb:hb + 16]
                ok += int("".join(HEX[int(i)] for i in hexlog.argmax(-1)) == val[:3])
        return ok / trials

    def test_circuit_is_the_same_at_head_dim_32(self):
        """The circuit names head dims as in a head_dim-16 head and maps them to the same RoPE
        frequencies in a wider head, with gains scaled so logits stay the same: at head_dim 32
        its frozen heads must compute what they compute at 16. Both models get the same
        embeddings, norms and MLPs; every other head writes nothing (the trainable induction
        votes too: their keys are ~0 at the text's first two tokens, where RMSNorm's eps, not
        the head width, sets their scale, so they start slightly differently there)."""
        from circuit_init import FROZEN_HEADS, implant_circuit
        from circuit_parts import CIRCUIT_DIMS, HEX, HEXB
        models = {}
        for hd in (16, 32):
            m = Qwen3(Qwen3Config(head_dim=hd))
            m.init_weights(torch.Generator().manual_seed(0), qk_norm_init=1.5)
            models[hd] = m
        shared = {n: p for n, p in models[16].named_parameters() if "self_attn" not in n}
        with torch.no_grad():
            for n, p in models[32].named_parameters():
                if n in shared:
                    p.copy_(shared[n])
            for hd, m in models.items():
                implant_circuit(m, torch.Generator().manual_seed(1))
                rep = m.c.num_attention_heads // m.c.num_key_value_heads
                for li, layer in enumerate(m.layers):
                    for kv in range(m.c.num_key_value_heads):
                        if (li, kv) not in FROZEN_HEADS:
                            layer.self_attn.o_proj.weight[:, kv * rep * hd:(kv + 1) * rep * hd] = 0
                    if li > 0:
                        layer.mlp.down_proj.weight.zero_()
        hb = models[16].c.hidden_size - CIRCUIT_DIMS + HEXB
        rng = np.random.default_rng(7)
        answers = {16: [], 32: []}
        with torch.no_grad():
            for _ in range(6):
                text, val = needle_text(rng)
                ids = torch.tensor([bt.encode(text + val[:2])])
                h = {hd: models[hd](ids, return_hidden=True)[0] for hd in (16, 32)}
                # float32 rounding differs between the widths and the copy heads' logits (~37)
                # amplify it: ~1e-3 of the scale; a wrong dim or gain gives O(1)
                self.assertLess(float((h[16] - h[32]).abs().max()), 5e-3 * float(h[16].abs().max()))
                for hd in (16, 32):
                    answers[hd].append("".join(HEX[int(i)] for i in h[hd][-3:, hb:hb + 16].argmax(-1)))
        self.assertEqual(answers[16], answers[32])
        with self.assertRaises(ValueError):  # the dim map needs a multiple of 16
            implant_circuit(Qwen3(Qwen3Config(head_dim=24)), torch.Generator().manual_seed(1))

    def test_key_heads_answer_the_asked_needle(self):
        """Four needles, distinct first digits: the first three value digits after the
        question follow the asked key (chance for the first alone: 1/4)."""
        from circuit_init import implant_circuit
        m = Qwen3(self.config())
        m.init_weights(torch.Generator().manual_seed(0), qk_norm_init=1.5)
        self.assertLess(self.answer_prefix_accuracy(m, n_chars=1), 0.2)
        implant_circuit(m, torch.Generator().manual_seed(1))
        self.assertGreater(self.answer_prefix_accuracy(m, n_chars=3), 0.7)  # 19/24 here

    def test_list_heads_answer_the_next_needle(self):
        """Four needles of one key, the first value already answered: the next answer's first
        three characters are the second needle's (the one after the answered one), through
        the previous-needle signatures (layers 3-5). Counted on the circuit's own logits (the
        hex block), which is what training starts from."""
        acc = self.hex_block_list_accuracy(self.circuit_model(), seed=4, answered=True)
        self.assertGreater(acc, 0.6)  # 18/24 here (chance: 1/1000)

    def test_key_heads_answer_the_first_of_same_key_needles(self):
        """Four needles of one key (multivalue wording), before the first answer: the key
        signatures tie, so the earliest preference must pick the first needle in the document
        (answers are listed in document order); without it the heads mix the four."""
        without, with_pref = (self.hex_block_list_accuracy(self.circuit_model(earliest=e), seed=6,
                                                           answered=False) for e in (0.0, 1.0))
        print(f"first of four same-key needles: {without:.2f} without, {with_pref:.2f} with the preference")
        self.assertLess(without, 0.35)
        self.assertGreater(with_pref, 0.6)


class TrainSmokeTest(unittest.TestCase):
    def test_resume_gives_the_same_weights(self):
        import train
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.jsonl")
            with open(path, "w") as f:
                for i in range(12):
                    text = f"abc{i:02d}=x{i % 7}. " * 3 + f"abc{i:02d}? x{i % 7}."
                    end = len(text.encode())
                    f.write(json.dumps({"text": text, "answer_spans": [[end - 3, end - 1]]}) + "\n")

            def run(name, *extra):
                args = ["--data", path, "--out", os.path.join(d, name), "--ckpt", os.path.join(d, name + ".pt"),
                        "--plan", "48:2,64:2", "--phases", "48:1,64:1", "--layers", "2", "--hidden", "32",
                        "--heads", "4", "--kv-heads", "2", "--ffn", "48", "--tokens-per-step", "256",
                        "--val-samples", "0", "--log-every", "1", "--warmup", "2", "--no-induction-init",
                        *extra]
                self.assertEqual(train.main(args), 0)
                return read_safetensors(os.path.join(d, name, "model.safetensors"))[0]

            straight = run("a")
            run("b", "--stop-after", "3")
            self.assertEqual(torch.load(os.path.join(d, "b.pt"))["step"], 3)
            resumed = run("b", "--resume")
            self.assertEqual(torch.load(os.path.join(d, "b.pt"))["step"], 4)
            for k in straight:
                np.testing.assert_array_equal(straight[k], resumed[k], err_msg=k)

    def test_frozen_circuit_is_isolated_from_training(self):
        """Default training keeps the circuit's weights (frozen_masks) and, what the masks are
        for, what the circuit reads: after 3 steps that moved the rest of the model, the
        reserved coordinates of the residual entering layer 2 (the key heads' input) are the
        same up to the RMS scale of the layers' inputs, and the key heads still answer."""
        import train
        from circuit_init import CIRCUIT_DIMS, frozen_masks, implant_circuit
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.jsonl")
            with open(path, "w") as f:
                for i in range(12):
                    text = f"One of the numbers for key-{i:02d} is: 7{i % 7}. " * 2 + "x"
                    f.write(json.dumps({"text": text, "answer_spans": [[40, 42]]}) + "\n")
            shape = ["--layers", "6", "--hidden", "128", "--heads", "8", "--kv-heads", "4", "--ffn", "96"]
            args = ["--data", path, "--out", os.path.join(d, "m"), "--ckpt", os.path.join(d, "m.pt"),
                    "--plan", "128:3", "--tokens-per-step", "256", "--val-samples", "0", "--warmup", "1",
                    "--seed", "5", "--lr", "1e-2", *shape]
            self.assertEqual(train.main(args), 0)
            trained = read_safetensors(os.path.join(d, "m", "model.safetensors"))[0]
            cfg = train.model_config(train.parse_args(args))
            start = Qwen3(cfg)
            start.init_weights(torch.Generator().manual_seed(5), qk_norm_init=train.parse_args(args).qk_norm_init)
            implant_circuit(start, torch.Generator().manual_seed(6))
            masks = frozen_masks(start)

            def assert_frozen_kept(ref, new):
                """ref, new: name -> tensor. Frozen entries equal; the rest of those matrices trained."""
                moved = 0
                for name, m in masks.items():
                    np.testing.assert_array_equal(new[name][m].numpy(), ref[name][m].numpy(), err_msg=name)
                    moved += int((new[name][~m] != ref[name][~m]).sum())
                self.assertGreater(moved, 0)

            def loaded(st):
                return {n: torch.from_numpy(np.array(st["model." + n])) for n in masks}

            assert_frozen_kept({n: p.detach() for n, p in start.named_parameters()}, loaded(trained))
            end = Qwen3(cfg)
            end.load_state_dict({n: torch.from_numpy(np.array(trained["model." + n]))
                                 for n, _ in end.named_parameters()})
            text, _ = needle_text(np.random.default_rng(8))
            ids = torch.tensor([bt.encode(text)])
            seen = []
            for model in (start, end):
                cap = {}
                hook = model.layers[2].register_forward_hook(lambda mod, inp, out: cap.setdefault("x", inp[0]))
                with torch.no_grad():
                    model(ids)
                hook.remove()
                seen.append(cap["x"][0])
            b = cfg.hidden_size - CIRCUIT_DIMS
            before, after = seen[0][:, b:], seen[1][:, b:]
            self.assertGreater(float((seen[1][:, :b] - seen[0][:, :b]).abs().max()), 1e-2)
            cos = torch.nn.functional.cosine_similarity(before, after, dim=-1)
            self.assertGreater(float(cos.min()), 0.99)
            # a second stage (--init-from the exported model) keeps the circuit it brings frozen
            args2 = ["--data", path, "--out", os.path.join(d, "m2"), "--ckpt", os.path.join(d, "m2.pt"),
                     "--init-from", os.path.join(d, "m"), "--plan", "128:2", "--tokens-per-step", "256",
                     "--val-samples", "0", "--warmup", "1", "--seed", "5", "--lr", "1e-2", *shape]
            self.assertEqual(train.main(args2), 0)
            second = read_safetensors(os.path.join(d, "m2", "model.safetensors"))[0]
            assert_frozen_kept(loaded(trained), loaded(second))


if __name__ == "__main__":
    unittest.main()
