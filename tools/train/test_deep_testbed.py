#!/usr/bin/python3
"""Tests of the two-path testbed construction (deep_testbed.py):
/usr/bin/python3 -m unittest tools.train.test_deep_testbed   (about 2 minutes on 2 busy cores: one build, 10 forward passes)."""
import os
import unittest

import torch

from . import deep_testbed as dt

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "models", "default")
FIXTURE = os.path.join(HERE, "..", "..", "tests", "data", "niah1024_test.jsonl")
torch.set_num_threads(2)


class PlacementTest(unittest.TestCase):
    def test_every_draw_keeps_the_chain_order(self):
        for n in (8, 9, 10, 12, 28):
            for seed in range(20):
                orig_at, ins, b = dt.placement(n, seed)
                self.assertEqual(sorted(orig_at + ins), list(range(n)))
                self.assertEqual(orig_at, sorted(orig_at))
                self.assertEqual(orig_at[:3], [0, 1, 2])
                self.assertTrue(all(orig_at[2] < i < orig_at[6] for i in ins), (n, seed, ins))
                self.assertLess(b["SEL"], b["ASEL"])
                self.assertLess(b["ASEL"], b["COPY"])
                self.assertGreater(b["COPY"], orig_at[3])
                for k, orig in (("SEL", 3), ("ASEL", 4), ("COPY", 5)):
                    self.assertIn(b[k], ins + [orig_at[orig]])
        self.assertEqual(dt.placement(28, 5), dt.placement(28, 5))


@unittest.skipUnless(os.path.exists(os.path.join(DEFAULT, "model.safetensors")), "no models/default")
class BuildTest(unittest.TestCase):
    """On two multi-needle fixture samples (multikey, multiquery: every chain head is needed
    there): each chain alone answers, cutting both loses everything."""

    @classmethod
    def setUpClass(cls):
        from .export import load_model_dir
        from .niah_eval import load_samples
        cls.base = load_model_dir(DEFAULT)
        cls.m, cls.info = dt.build(cls.base, n_layers=9, seed=0)
        cls.samples = [s for s in load_samples(FIXTURE)
                       if s["family"] in ("multikey", "multiquery") and s["depth"] == 0.0]
        cls.heads = {k: tuple(map(int, v.split("."))) for k, v in cls.info["heads"].items()}

    def score(self, names):
        from .niah_eval import score
        plan = {self.heads[n]: (64, 4) for n in names} or None
        return score(self.m, self.samples, plan)[0]["all"]

    def test_expansion_computes_the_default(self):
        text = "One of the special magic numbers for calm-fountain is: 1234567. The sky is blue."
        self.assertLess(dt.check_expansion(self.base, 9, 8, 0, text), 2e-2)

    def test_each_chain_alone_answers(self):
        full = self.score([])
        self.assertGreater(full, 0.8)
        for cut in (["SEL", "ASEL", "COPY"], ["SEL_B", "ASEL_B", "COPY_B"]):
            self.assertEqual(self.score(cut), full, cut)

    def test_cutting_both_chains_loses_the_answers(self):
        # (ASEL's cut only shows where an asked key is over 64 tokens from its answer)
        for cut in (["SEL", "SEL_B"], ["COPY", "SEL_B"]):
            self.assertEqual(self.score(cut), 0.0, cut)

    def test_shape(self):
        c = self.m.c
        self.assertEqual((c.num_hidden_layers, c.num_key_value_heads, c.num_attention_heads), (9, 8, 16))
        self.assertEqual(len(set(self.heads.values())), 6)


if __name__ == "__main__":
    unittest.main()
