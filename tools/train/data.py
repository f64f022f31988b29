"""Training data: JSONL lines {"text": str, "answer_spans": [[byte_begin, byte_end], ...]}
written by the C++ task generator (`bosch gen --train`). Texts are tokenized by bytes
(byte_tokenizer); answer spans (byte offsets into the UTF-8 text) become a per-token mask.

Batches are a pure function of (seed, phase, step): resuming needs no RNG state.
"""
import json
import sys

import numpy as np

from . import byte_tokenizer


class Sample:
    __slots__ = ("ids", "answer", "scored")

    def __init__(self, ids, answer, scored=None):
        self.ids = ids          # np.int64 [n]
        self.answer = answer    # np.bool_ [n], True where the token is part of an answer span
        # np.bool_ [n]: whether predicting this token counts in the loss (see answer_region_mask)
        self.scored = np.ones(len(ids), dtype=np.bool_) if scored is None else scored


def answer_region_mask(ids, answer):
    """Loss mask of a text with answers: after the last '\n' before the first answer (the
    answer prefix and the answers) only the answer tokens and the ' ' right before each answer
    count. The rest there (the prefix, the ',' between answers) is unscored by the NIAH tasks,
    and the circuit's copy head, active in the answer region, writes guesses there that the
    trained part should not learn to fight."""
    scored = np.ones(len(ids), dtype=np.bool_)
    idx = np.flatnonzero(answer)
    if idx.size == 0:
        return scored
    first = int(idx[0])
    nl = np.flatnonzero(ids[:first] == 10)
    start = int(nl[-1]) + 1 if nl.size else first
    region = np.zeros(len(ids), dtype=np.bool_)
    region[start:] = True
    lead = np.zeros(len(ids), dtype=np.bool_)
    lead[:-1] = (ids[:-1] == 32) & answer[1:] & ~answer[:-1]
    scored[region] = (answer | lead)[region]
    return scored


def parse_line(line, where):
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as e:
        raise ValueError(f"{where}: not JSON ({e})")
    if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
        raise ValueError(f'{where}: expected an object with a string field "text"')
    spans = rec.get("answer_spans", [])
    if not isinstance(spans, list):
        raise ValueError(f'{where}: "answer_spans" must be a list of [byte_begin, byte_end]')
    ids, starts = byte_tokenizer.encode_with_offsets(rec["text"])
    nbytes = len(rec["text"].encode("utf-8"))
    starts = np.asarray(starts, dtype=np.int64)
    answer = np.zeros(len(ids), dtype=np.bool_)
    for sp in spans:
        if (not isinstance(sp, list) or len(sp) != 2 or not all(isinstance(x, int) for x in sp)
                or not 0 <= sp[0] < sp[1] <= nbytes):
            raise ValueError(f'{where}: bad answer span {sp!r} (need [begin, end] with '
                             f'0 <= begin < end <= {nbytes}, the text length in bytes)')
        answer |= (starts >= sp[0]) & (starts < sp[1])
    ids = np.asarray(ids, dtype=np.int64)
    return Sample(ids, answer, answer_region_mask(ids, answer))


def load_jsonl(paths, limit=None):
    samples = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                samples.append(parse_line(line, f"{path}:{n}"))
                if limit and len(samples) >= limit:
                    return samples
    if not samples:
        raise ValueError(f"no samples in {', '.join(paths)}")
    return samples


def length_histogram(samples):
    lens = np.array([len(s.ids) for s in samples])
    edges = [0, 128, 256, 512, 1024, 2048, 4096, 1 << 30]
    parts = []
    for lo, hi in zip(edges, edges[1:]):
        k = int(((lens > lo) & (lens <= hi)).sum())
        if k:
            parts.append(f"({lo},{hi if hi < 1 << 30 else 'inf'}]: {k}")
    return ", ".join(parts)


class PhasePool:
    """The samples a phase with maximum length `max_len` tokens draws from: those with
    max_len/2 < length <= max_len (so they fill the window), else all that fit."""

    def __init__(self, samples, max_len, phase_index, seed):
        fit = [s for s in samples if len(s.ids) <= max_len]
        long_enough = [s for s in fit if len(s.ids) > max_len // 2]
        if not fit:
            raise ValueError(f"phase {max_len}: no sample has <= {max_len} tokens "
                             f"(lengths: {length_histogram(samples)})")
        if not long_enough:
            print(f"warning: phase {max_len}: no sample longer than {max_len // 2} tokens; "
                  f"using {len(fit)} shorter ones", file=sys.stderr)
        self.samples = long_enough or fit
        self.max_len = max_len
        self.phase_index = phase_index
        self.seed = seed
        self._perms = {}

    def _perm(self, epoch):
        if epoch not in self._perms:
            rng = np.random.default_rng([self.seed, self.phase_index, epoch])
            self._perms = {epoch: rng.permutation(len(self.samples))}
        return self._perms[epoch]

    def batch(self, step_in_phase, batch_size, pad_id):
        """(inputs [B, L-1], targets [B, L-1], answer_mask [B, L-1], valid [B, L-1]) as numpy,
        L = longest sample of the batch; padding and unscored tokens have valid = False."""
        n = len(self.samples)
        chosen = []
        for k in range(step_in_phase * batch_size, (step_in_phase + 1) * batch_size):
            chosen.append(self.samples[self._perm(k // n)[k % n]])
        L = max(len(s.ids) for s in chosen)
        ids = np.full((batch_size, L), pad_id, dtype=np.int64)
        ans = np.zeros((batch_size, L), dtype=np.bool_)
        valid = np.zeros((batch_size, L), dtype=np.bool_)
        for b, s in enumerate(chosen):
            ids[b, :len(s.ids)] = s.ids
            ans[b, :len(s.ids)] = s.answer
            valid[b, :len(s.ids)] = s.scored
        return ids[:, :-1], ids[:, 1:], ans[:, 1:], valid[:, 1:]

    def epochs(self, steps, batch_size):
        return steps * batch_size / len(self.samples)
