"""Minimal safetensors writer/reader (no dependency on the safetensors package).

Format: 8-byte little-endian header length N, then N bytes of JSON
{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}},
padded with spaces so the data starts 8-byte aligned, then the raw little-endian data;
offsets are relative to the start of the data.
"""
import json
import os
import struct

import numpy as np

_DTYPES = {"F32": np.float32, "F16": np.float16}  # BF16 has no numpy type; read only F32/F16


def write_safetensors(path, tensors, metadata=None):
    """tensors: dict name -> numpy array (float32 or float16). Written atomically, names sorted."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name])
        if a.dtype == np.float32:
            dt = "F32"
        elif a.dtype == np.float16:
            dt = "F16"
        else:
            raise ValueError(f"{name}: unsupported dtype {a.dtype}")
        raw = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * ((8 - len(hjson) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def read_safetensors(path):
    """Returns (dict name -> numpy array, metadata dict)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, h in header.items():
        b, e = h["data_offsets"]
        dt = np.dtype(_DTYPES[h["dtype"]]).newbyteorder("<")
        out[name] = np.frombuffer(data[base + b:base + e], dtype=dt).reshape(h["shape"]).astype(
            _DTYPES[h["dtype"]])
    return out, meta
