#!/usr/bin/python3
"""Tests of the trainer's pieces: /usr/bin/python3 -m unittest discover -s tools/train -t . -p 'test_*.py'
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
from . import byte_tokenizer as bt
from . import data
from . import export
from .model import (Qwen3, Qwen3Config, RMSNorm, apply_rope, grouped_attention,
                   plan_masks, reference_attention, rope_cos_sin)
from .safetensors_io import read_safetensors, write_safetensors

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


FIXTURE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "data", "niah1024_test.jsonl")


def circuit_model(seed=0):
    """The default architecture (train.py's defaults), seed-`seed` init, circuit implanted."""
    from . import train
    from .circuit_init import implant_circuit
    m = Qwen3(train.model_config(train.parse_args(["--data", "-", "--out", "-"])))
    m.init_weights(torch.Generator().manual_seed(seed), qk_norm_init=1.5)
    implant_circuit(m, torch.Generator().manual_seed(seed + 1))
    return m.eval()


class CircuitTest(unittest.TestCase):
    """The hand-built retrieval circuit answers every NIAH family before any training, on
    samples of the C++ task generator (tests/data/niah1024_test.jsonl: `bosch gen --suite niah
    --lengths 1024 --depths 2 --samples 1 --split test`), and loses them all when every head is
    SWA(64, 4). Scored like the engine, teacher-forced, but without each answer's leading ' '
    (the trained part writes it: the circuit is silent after ':' and ',')."""

    @classmethod
    def setUpClass(cls):
        from .niah_eval import load_samples
        cls.m = circuit_model()
        cls.samples = load_samples(FIXTURE)

    def score(self, model, plan=None):
        from .niah_eval import score
        return score(model, self.samples, plan, skip_space=True)[0]

    def test_profiles_keep_their_margins(self):
        from .circuit_init import PROFILES
        from .circuit_parts import profile_margin
        for name, (constraints, prof) in PROFILES.items():
            self.assertGreater(profile_margin(prof, constraints), 10.0, name)

    def test_answers_every_family_before_training(self):
        res = self.score(self.m)
        self.assertEqual(len(res), 9, res)  # 8 families and 'all'
        for family, v in res.items():
            self.assertEqual(v, 1.0, f"{family}: {res}")

    def test_every_head_swa_loses_the_needles(self):
        c = self.m.c
        plan = {(l, h): (64, 4) for l in range(c.num_hidden_layers) for h in range(c.num_key_value_heads)}
        self.assertEqual(self.score(self.m, plan)["all"], 0.0)

    def test_the_copy_head_answers(self):
        """With the copy head's output zeroed nothing is answered: no other path does it."""
        import copy
        from .circuit_init import CIRCUIT_LAYERS
        m = copy.deepcopy(self.m)
        hd = m.c.head_dim
        with torch.no_grad():
            m.layers[CIRCUIT_LAYERS - 1].self_attn.o_proj.weight[:, :2 * hd] = 0
        self.assertEqual(self.score(m)["all"], 0.0)

    def test_shape_is_checked(self):
        from .circuit_init import implant_circuit
        with self.assertRaisesRegex(ValueError, "head_dim 16"):
            implant_circuit(Qwen3(tiny_config()), torch.Generator().manual_seed(1))
        from . import train
        tied = train.model_config(train.parse_args(["--data", "-", "--out", "-", "--tied"]))
        with self.assertRaisesRegex(ValueError, "untied"):
            implant_circuit(Qwen3(tied), torch.Generator().manual_seed(1))


class AnswerRegionMaskTest(unittest.TestCase):
    def test_prefix_and_separators_are_not_scored(self):
        text = "hay. One: 12.\nWhat?\nThe answer is: 12, 34"
        ids = np.array(bt.encode(text))
        answer = np.zeros(len(ids), dtype=np.bool_)
        for v in ("12, ", "34"):
            at = text.rindex(v.strip(", "))
            answer[at:at + 2] = True
        scored = data.answer_region_mask(ids, answer)
        kept = "".join(chr(t) for t, s in zip(ids, scored) if s)
        # everything up to the question's '\n' counts; after it the answers and their ' '
        self.assertEqual(kept, "hay. One: 12.\nWhat?\n 12 34")


class TrainSmokeTest(unittest.TestCase):
    def test_resume_gives_the_same_weights(self):
        from . import train
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
        for, what it computes: after 3 steps at the shipped learning rate (1.5e-3; it moves the
        rest of the model), the circuit still answers the fixture's samples; a second stage
        (--init-from the export, lr 1e-2) keeps the frozen entries too. The weights are isolated,
        the function is not: the trained heads and LM-head entries add to the same logits, and 3
        steps at lr 1e-2 drown the copy head (measured: 0.0), so keep the learning rate low."""
        from . import train
        from .circuit_init import frozen_masks
        from .niah_eval import load_samples, score
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.jsonl")
            with open(path, "w") as f:
                for i in range(12):
                    text = f"One of the special magic numbers for calm-key{i:02d} is: 7{i % 7}. The sky is blue. " * 2
                    at = text.rindex(f"7{i % 7}")
                    f.write(json.dumps({"text": text, "answer_spans": [[at, at + 2]]}) + "\n")
            args = ["--data", path, "--out", os.path.join(d, "m"), "--ckpt", os.path.join(d, "m.pt"),
                    "--plan", "256:3", "--tokens-per-step", "256", "--val-samples", "0", "--warmup", "1",
                    "--seed", "0", "--lr", "1.5e-3", "--qk-norm-init", "1.5"]
            self.assertEqual(train.main(args), 0)
            start = circuit_model(0)
            masks = frozen_masks(start)
            self.assertIn("lm_head.weight", masks)

            def assert_frozen_kept(ref, new):
                """ref, new: name -> tensor. Frozen entries equal; the rest of those matrices trained."""
                moved = 0
                for name, m in masks.items():
                    np.testing.assert_array_equal(new[name][m].numpy(), ref[name][m].numpy(), err_msg=name)
                    moved += int((new[name][~m] != ref[name][~m]).sum())
                self.assertGreater(moved, 0)

            def loaded(directory):
                st = read_safetensors(os.path.join(directory, "model.safetensors"))[0]
                return {n: torch.from_numpy(np.array(st[n if n.startswith("lm_head.") else "model." + n],
                                                     dtype=np.float32)) for n in masks}

            trained = loaded(os.path.join(d, "m"))
            assert_frozen_kept({n: p.detach() for n, p in start.named_parameters()}, trained)
            end = export.load_model_dir(os.path.join(d, "m"))
            samples = load_samples(FIXTURE)[::3]
            self.assertEqual(score(end, samples, skip_space=True)[0]["all"], 1.0)
            args2 = ["--data", path, "--out", os.path.join(d, "m2"), "--ckpt", os.path.join(d, "m2.pt"),
                     "--init-from", os.path.join(d, "m"), "--plan", "256:2", "--tokens-per-step", "256",
                     "--val-samples", "0", "--warmup", "1", "--seed", "0", "--lr", "1e-2"]
            self.assertEqual(train.main(args2), 0)
            assert_frozen_kept(trained, loaded(os.path.join(d, "m2")))

if __name__ == "__main__":
    unittest.main()
