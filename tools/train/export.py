"""Export a trained model.Qwen3 as a Hugging Face model directory:
config.json (Qwen3ForCausalLM), model.safetensors (HF tensor names, lm_head omitted when tied),
tokenizer.json + tokenizer_config.json (byte-level, see byte_tokenizer.py).

CLI: python3 -m tools.train.export CHECKPOINT OUT_DIR   (a checkpoint written by train.py)
"""
import json
import os

import numpy as np
import torch

from . import byte_tokenizer
from .model import Qwen3, Qwen3Config
from .safetensors_io import read_safetensors, write_safetensors


def hf_config(c: Qwen3Config, dtype="float32"):
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": byte_tokenizer.EOT_ID,
        "eos_token_id": byte_tokenizer.EOT_ID,
        "head_dim": c.head_dim,
        "hidden_act": "silu",
        "hidden_size": c.hidden_size,
        "initializer_range": c.initializer_range,
        "intermediate_size": c.intermediate_size,
        "max_position_embeddings": c.max_position_embeddings,
        "max_window_layers": c.num_hidden_layers,
        "num_attention_heads": c.num_attention_heads,
        "num_hidden_layers": c.num_hidden_layers,
        "num_key_value_heads": c.num_key_value_heads,
        "rms_norm_eps": c.rms_norm_eps,
        "rope_scaling": None,
        "rope_theta": c.rope_theta,
        "sliding_window": None,
        "use_sliding_window": False,
        "tie_word_embeddings": c.tie_word_embeddings,
        "torch_dtype": dtype,
        "use_cache": True,
        "vocab_size": c.vocab_size,
    }


def config_from_hf(cfg: dict) -> Qwen3Config:
    return Qwen3Config(
        vocab_size=cfg["vocab_size"], hidden_size=cfg["hidden_size"],
        intermediate_size=cfg["intermediate_size"], num_hidden_layers=cfg["num_hidden_layers"],
        num_attention_heads=cfg["num_attention_heads"],
        num_key_value_heads=cfg["num_key_value_heads"], head_dim=cfg["head_dim"],
        rms_norm_eps=cfg["rms_norm_eps"], rope_theta=cfg["rope_theta"],
        max_position_embeddings=cfg["max_position_embeddings"],
        tie_word_embeddings=cfg["tie_word_embeddings"],
        initializer_range=cfg.get("initializer_range", 0.02))


def hf_state_dict(model: Qwen3):
    """numpy float32 tensors under Hugging Face names."""
    out = {}
    for name, t in model.state_dict().items():
        hf = name if name.startswith("lm_head.") else "model." + name
        out[hf] = t.detach().to(torch.float32).cpu().numpy()
    return out


def _write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def export_model(model: Qwen3, out_dir, metadata=None, dtype="float32"):
    """Writes the HF directory. dtype "float32" or "float16" (tensor storage)."""
    os.makedirs(out_dir, exist_ok=True)
    tensors = hf_state_dict(model)
    if dtype == "float16":
        tensors = {k: v.astype(np.float16) for k, v in tensors.items()}
    meta = {"format": "pt"}
    meta.update(metadata or {})
    write_safetensors(os.path.join(out_dir, "model.safetensors"), tensors, meta)
    _write_json(os.path.join(out_dir, "config.json"), hf_config(model.c, dtype))
    _write_json(os.path.join(out_dir, "generation_config.json"),
                {"bos_token_id": byte_tokenizer.EOT_ID, "eos_token_id": byte_tokenizer.EOT_ID,
                 "do_sample": False})
    byte_tokenizer.write_tokenizer_files(out_dir, max_length=model.c.max_position_embeddings)
    return os.path.getsize(os.path.join(out_dir, "model.safetensors"))


def load_model_dir(model_dir) -> Qwen3:
    """Loads an exported directory back into model.Qwen3 (float32)."""
    with open(os.path.join(model_dir, "config.json")) as f:
        c = config_from_hf(json.load(f))
    tensors, _ = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    m = Qwen3(c)
    sd = {}
    for name, a in tensors.items():
        key = name if name.startswith("lm_head.") else name[len("model."):]
        sd[key] = torch.from_numpy(a.astype(np.float32))
    m.load_state_dict(sd, strict=True)
    return m.eval()


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="Export a train.py checkpoint to a HF model dir.")
    ap.add_argument("checkpoint")
    ap.add_argument("out_dir")
    ap.add_argument("--dtype", choices=["float32", "float16"], default="float32")
    a = ap.parse_args()
    ck = torch.load(a.checkpoint, map_location="cpu")
    m = Qwen3(Qwen3Config(**ck["model_config"]))
    m.load_state_dict(ck["model"])
    size = export_model(m, a.out_dir, {"step": str(ck.get("step", "?"))}, a.dtype)
    print(f"wrote {a.out_dir} (model.safetensors {size / 1e6:.2f} MB)")
