"""Qwen3-style decoder in PyTorch with Hugging Face Qwen3 semantics (no transformers needed).

Matches transformers' Qwen3ForCausalLM: RMSNorm w * x / sqrt(mean(x^2) + eps) computed in
float32; q_norm / k_norm are RMSNorms over head_dim applied per head before RoPE; rotate-half
RoPE with inv_freq = theta^(-2i/head_dim); GQA where query head h reads KV head
h // (n_heads / n_kv_heads); SwiGLU MLP down(silu(gate(x)) * up(x)); no biases; final norm;
LM head optionally tied to the embedding. Parameter names equal the HF names without the
"model." prefix handling (see export.hf_state_dict).

Optionally a per-(layer, KV head) sliding-window plan with the engine's semantics
(src/model/attention_plan.h): query i sees key j iff j <= i and (i - j < W or j < S).
"""
import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Qwen3Config:
    vocab_size: int = 259
    hidden_size: int = 144
    intermediate_size: int = 384
    num_hidden_layers: int = 8
    num_attention_heads: int = 8
    num_key_value_heads: int = 4
    head_dim: int = 16
    rms_norm_eps: float = 1e-6
    rope_theta: float = 1e6
    max_position_embeddings: int = 4096
    tie_word_embeddings: bool = True
    initializer_range: float = 0.02
    attn_chunk: int = 64  # query block size of the causal attention (speed only, not exported)

    def to_dict(self):
        return asdict(self)

    def n_params(self):
        d, hd, H, Hk, f = (self.hidden_size, self.head_dim, self.num_attention_heads,
                           self.num_key_value_heads, self.intermediate_size)
        attn = d * H * hd + 2 * d * Hk * hd + H * hd * d + 2 * hd
        mlp = 3 * d * f
        per_layer = attn + mlp + 2 * d
        emb = self.vocab_size * d * (1 if self.tie_word_embeddings else 2)
        return self.num_hidden_layers * per_layer + emb + d


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rope_cos_sin(n, head_dim, theta, offset=0, dtype=torch.float32):
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    pos = torch.arange(offset, offset + n, dtype=torch.float32)
    freqs = torch.outer(pos, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rope(x, cos, sin):  # x [B, heads, L, hd], cos/sin [L, hd]
    return x * cos + rotate_half(x) * sin


def plan_masks(plan, n, n_layers, n_kv):
    """Additive attention masks per layer: [n_kv, 1, n, n] (0 or -inf), from
    plan = None (all full) or a dict {(layer, kv_head): (window, sinks)} of SWA heads."""
    i = torch.arange(n).view(n, 1)
    j = torch.arange(n).view(1, n)
    causal = j <= i
    neg = torch.tensor(float("-inf"))
    full = torch.where(causal, torch.tensor(0.0), neg)
    masks = []
    for layer in range(n_layers):
        rows = []
        for h in range(n_kv):
            if plan and (layer, h) in plan:
                w, s = plan[(layer, h)]
                vis = causal & (((i - j) < w) | (j < s))
                rows.append(torch.where(vis, torch.tensor(0.0), neg))
            else:
                rows.append(full)
        masks.append(torch.stack(rows).unsqueeze(1))
    return masks


def grouped_attention(q, k, v, mask, scale, chunk=0):
    """Causal GQA attention. q [B, H, L, hd], k/v [B, Hk, L, hd], mask None (plain causal),
    [L, L] or [Hk, 1, L, L] additive (must include the causal part). Returns [B, H, L, hd].
    Query heads kv*rep .. kv*rep+rep-1 share KV head kv (kv = h // rep); they are grouped as
    rows of one matrix product per KV head, so K/V are never copied. With chunk > 0 the queries
    are processed in blocks of `chunk` rows that only multiply the keys they can see (causal),
    which skips most of the masked upper triangle (same result, less work on long inputs); with
    mask None only the diagonal block of a chunk is masked, which halves the training step time."""
    B, H, L, hd = q.shape
    Hk = k.shape[1]
    rep = H // Hk
    qg = (q * scale).reshape(B * Hk, rep, L, hd)
    kt = k.reshape(B * Hk, L, hd).transpose(1, 2)   # [B*Hk, hd, L]
    vv = v.reshape(B * Hk, L, hd)
    if mask is None:
        causal = torch.full((chunk or L, chunk or L), float("-inf")).triu(1)
    outs = []
    step = chunk if chunk and chunk < L else L
    for q0 in range(0, L, step):
        q1 = min(L, q0 + step)
        n = q1 - q0
        qc = qg[:, :, q0:q1].reshape(B * Hk, rep * n, hd)
        scores = torch.bmm(qc, kt[:, :, :q1]).view(B, Hk, rep, n, q1)
        if mask is None:  # keys before the chunk are all visible
            scores[..., q0:q1] += causal[:n, :n]
            probs = F.softmax(scores, dim=-1)
        else:
            probs = F.softmax(scores + mask[..., q0:q1, :q1], dim=-1)  # [n, q1] or [Hk, 1, n, q1]
        outs.append(torch.bmm(probs.view(B * Hk, rep * n, q1), vv[:, :q1]).view(B * Hk, rep, n, hd))
    out = outs[0] if len(outs) == 1 else torch.cat(outs, dim=2)
    return out.view(B, H, L, hd)


def reference_attention(q, k, v, visible, scale):
    """Slow, obvious version for tests: loops over heads; visible[kv][i][j] bool."""
    B, H, L, hd = q.shape
    rep = H // k.shape[1]
    out = torch.zeros_like(q)
    for h in range(H):
        kv = h // rep
        s = q[:, h] @ k[:, kv].transpose(-1, -2) * scale
        s = s.masked_fill(~visible[kv], float("-inf"))
        out[:, h] = torch.softmax(s, dim=-1) @ v[:, kv]
    return out


class Attention(nn.Module):
    def __init__(self, c: Qwen3Config):
        super().__init__()
        self.c = c
        H, Hk, hd, d = c.num_attention_heads, c.num_key_value_heads, c.head_dim, c.hidden_size
        assert H % Hk == 0, "num_attention_heads must be a multiple of num_key_value_heads"
        self.q_proj = nn.Linear(d, H * hd, bias=False)
        self.k_proj = nn.Linear(d, Hk * hd, bias=False)
        self.v_proj = nn.Linear(d, Hk * hd, bias=False)
        self.o_proj = nn.Linear(H * hd, d, bias=False)
        self.q_norm = RMSNorm(hd, c.rms_norm_eps)
        self.k_norm = RMSNorm(hd, c.rms_norm_eps)

    def forward(self, x, cos, sin, mask):
        """x [B, L, d]; mask None (causal), [L, L] (shared) or [Hk, 1, L, L] (per KV head)."""
        B, L, _ = x.shape
        H, Hk, hd = self.c.num_attention_heads, self.c.num_key_value_heads, self.c.head_dim
        q = self.q_norm(self.q_proj(x).view(B, L, H, hd)).transpose(1, 2)
        k = self.k_norm(self.k_proj(x).view(B, L, Hk, hd)).transpose(1, 2)
        v = self.v_proj(x).view(B, L, Hk, hd).transpose(1, 2)
        q = apply_rope(q, cos, sin)
        k = apply_rope(k, cos, sin)
        out = grouped_attention(q, k, v, mask, hd ** -0.5, self.c.attn_chunk)
        out = out.transpose(1, 2).reshape(B, L, H * hd)
        return self.o_proj(out)


class MLP(nn.Module):
    def __init__(self, c: Qwen3Config):
        super().__init__()
        self.gate_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.up_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.down_proj = nn.Linear(c.intermediate_size, c.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, c: Qwen3Config):
        super().__init__()
        self.self_attn = Attention(c)
        self.mlp = MLP(c)
        self.input_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)

    def forward(self, x, cos, sin, mask):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class Qwen3(nn.Module):
    def __init__(self, c: Qwen3Config):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c.vocab_size, c.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(c) for _ in range(c.num_hidden_layers))
        self.norm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.lm_head = None if c.tie_word_embeddings else \
            nn.Linear(c.hidden_size, c.vocab_size, bias=False)

    def init_weights(self, generator=None, qk_norm_init=1.0):
        """Normal(0, initializer_range) like HF; residual output projections scaled by
        1/sqrt(2 * layers) (GPT-2) for a stable start of a deep narrow model. q/k norm gains
        start at qk_norm_init: with RMS-normalised q and k the attention logit is at most
        gain^2 * sqrt(head_dim), too flat at gain 1 to pick one needle out of 1000 tokens."""
        std = self.c.initializer_range
        out_std = std / math.sqrt(2 * self.c.num_hidden_layers)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.dim() == 1:
                    p.fill_(qk_norm_init if name.endswith(("q_norm.weight", "k_norm.weight")) else 1.0)
                elif name.endswith("o_proj.weight") or name.endswith("down_proj.weight"):
                    p.normal_(0.0, out_std, generator=generator)
                else:
                    p.normal_(0.0, std, generator=generator)

    def forward(self, ids, plan=None, return_hidden=False):
        """ids [B, L] int64 -> logits [B, L, vocab] (float32)."""
        B, L = ids.shape
        c = self.c
        x = self.embed_tokens(ids)
        cos, sin = rope_cos_sin(L, c.head_dim, c.rope_theta, dtype=x.dtype)
        if plan:
            masks = plan_masks(plan, L, c.num_hidden_layers, c.num_key_value_heads)
        else:
            masks = [None] * c.num_hidden_layers
        for layer, m in zip(self.layers, masks):
            x = layer(x, cos, sin, m)
        x = self.norm(x)
        if return_hidden:
            return x
        w = self.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
        return F.linear(x, w)


def describe(c: Qwen3Config):
    n = c.n_params()
    return (f"{c.num_hidden_layers} layers, hidden {c.hidden_size}, {c.num_attention_heads} query / "
            f"{c.num_key_value_heads} KV heads x head_dim {c.head_dim}, ffn {c.intermediate_size}, "
            f"vocab {c.vocab_size}, theta {c.rope_theta:g}: {n:,} parameters = "
            f"{n * 4 / 1e6:.2f} MB F32, {c.num_hidden_layers * c.num_key_value_heads} KV heads")
