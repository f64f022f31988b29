"""Mask exports read back the way their consumers read them (no consumer code copied in).

- DuoAttention pattern (`--format duo`): read as DuoAttention's load_attn_pattern does:
  numpy.loadtxt(full_attention_heads.tsv, dtype=float, delimiter="\\t"), clipped to [0, 1], and
  config.json["sink_size"], ["recent_size"]; the array must be [layers x KV heads] with 1 = full.
- Hugging Face (`--format layer-windows`, "huggingface"): the fields transformers configs use
  today: layer_types (one entry per layer, each in transformers' ALLOWED_LAYER_TYPES),
  sliding_window (a positive int when a layer slides) and use_sliding_window (Qwen2/Qwen3
  configs set sliding_window = None without it).
- TensorRT-LLM (`--format layer-windows`, "tensorrt_llm"): KvCacheConfig.max_attention_window
  (a list of positive ints, one per layer here) and sink_token_length (int >= 0).
Exit 77 (ctest SKIP) when numpy is missing. Usage: check_mask_exports.py BOSCH_BIN BUILD_DIR
"""
import json
import os
import shutil
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("SKIPPED: python3-numpy is not installed (scripts/install-deps.sh installs it)")
    sys.exit(77)

BOSCH, BUILD = sys.argv[1], sys.argv[2]
WORK = os.path.join(BUILD, "consumers-masks")
L, H, W, S, CTX = 6, 4, 16, 2, 4096
HF_LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "linear_attention")
failures = []


def expect(ok, what):
    print(("ok      " if ok else "FAILED  ") + what)
    if not ok:
        failures.append(what)


def mask_file(name, swa):
    path = os.path.join(WORK, name + ".json")
    json.dump({"format": "bosch-mask", "version": 1,
               "model": {"arch": "qwen2", "n_layers": L, "n_heads": 8, "n_kv_heads": H, "head_dim": 8,
                         "identity": "test"},
               "window": W, "sinks": S, "target_ratio": 0.5, "swa": swa}, open(path, "w"))
    return path


def export(mask, fmt, out, *extra):
    p = subprocess.run([BOSCH, "export-mask", mask, "--format", fmt, "--out", out, *extra],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAILED: bosch export-mask --format {fmt} exited {p.returncode}: {p.stderr}")


def load_attn_pattern(d):
    """What DuoAttention's duo_attn/utils.py load_attn_pattern does with a pattern directory."""
    heads = np.loadtxt(os.path.join(d, "full_attention_heads.tsv"), dtype=float, delimiter="\t")
    heads = np.clip(heads, 0, 1)
    config = json.load(open(os.path.join(d, "config.json")))
    return heads, config["sink_size"], config["recent_size"]


def check_duo():
    swa = [[(l * 3 + h) % 2 for h in range(H)] for l in range(L)]  # per-head mask
    out = os.path.join(WORK, "duo")
    export(mask_file("mixed", swa), "duo", out)
    heads, sink, recent = load_attn_pattern(out)
    expect(heads.shape == (L, H), f"duo: numpy.loadtxt gives shape {heads.shape}, expected ({L}, {H})")
    want = 1.0 - np.array(swa, dtype=float)  # DuoAttention: 1 = full (retrieval) head
    expect(heads.shape == want.shape and bool((heads == want).all()),
           "duo: full_attention_heads values = 1 for full heads, 0 for SWA heads")
    expect(sink == S and recent == W, f"duo: config.json sink_size {sink} (want {S}), recent_size {recent} (want {W})")


def check_layer_windows():
    swa = [[1 if l % 3 else 0] * H for l in range(L)]  # layer-uniform: layers 0 and 3 full
    out = os.path.join(WORK, "windows.json")
    export(mask_file("uniform", swa), "layer-windows", out, "--max-context", str(CTX))
    j = json.load(open(out))
    hf = j["huggingface"]
    types = hf.get("layer_types")
    expect(isinstance(types, list) and len(types) == L, f"hf: layer_types has one entry per layer ({L})")
    expect(all(t in HF_LAYER_TYPES for t in types or []), f"hf: layer_types entries in {HF_LAYER_TYPES}")
    expect(types == ["sliding_attention" if row[0] else "full_attention" for row in swa],
           "hf: sliding_attention exactly on the SWA layers")
    sw = hf.get("sliding_window")
    expect(isinstance(sw, int) and not isinstance(sw, bool) and sw == W, f"hf: sliding_window {sw} == W {W}")
    expect(hf.get("use_sliding_window") is True, "hf: use_sliding_window true (Qwen2/Qwen3 configs need it)")
    # Qwen2Config/Qwen3Config: sliding_window = sliding_window if use_sliding_window else None.
    effective = sw if hf.get("use_sliding_window") else None
    expect(effective is not None, "hf: a Qwen2-style config keeps the window after its own normalisation")
    trt = j["tensorrt_llm"]
    maw = trt.get("max_attention_window")
    expect(isinstance(maw, list) and len(maw) == L and all(isinstance(x, int) and x > 0 for x in maw),
           f"trtllm: max_attention_window is {L} positive ints")
    expect(maw == [W if row[0] else CTX for row in swa], f"trtllm: W ({W}) on SWA layers, {CTX} on full ones")
    sink = trt.get("sink_token_length")
    expect(isinstance(sink, int) and sink == S, f"trtllm: sink_token_length {sink} == S {S}")


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
check_duo()
check_layer_windows()
if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("OK")
