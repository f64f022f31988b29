#!/usr/bin/env python3
"""The layers of ARCHITECTURE.md, checked on every #include "..." of src/: a folder of src/ may
include only itself and the folders below it, and inside search/ a room only itself and the rooms
below it. Prints each include that points up or sideways and exits 1; 0 when there is none."""
import os
import re
import sys

# Each folder and what it may include directly; includes are checked against the closure.
LAYERS = {
    "util": [],
    "formats": ["util"],
    "kernels": ["formats"],
    "tokenizer": ["formats"],
    "model": ["formats", "kernels"],
    "masks": ["model"],
    "tasks": ["model", "tokenizer"],
    "search": ["tasks", "masks"],
    "cli": ["search"],
}
ROOMS = {  # search/'s rooms
    "core": [],
    "objectives": ["core"],
    "baselines": ["objectives"],
    "stages": ["objectives"],
    "experiments": ["baselines", "stages"],
}


def closure(graph):
    out = {}
    def walk(n):
        if n not in out:
            out[n] = {n}
            for d in graph[n]:
                out[n] |= walk(d)
        return out[n]
    for n in graph:
        walk(n)
    return out


def main(src):
    layers, rooms = closure(LAYERS), closure(ROOMS)
    bad = []
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith((".h", ".cpp")):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src).split(os.sep)
            layer = rel[0]
            if layer not in LAYERS:
                bad.append(f"{path}: folder '{layer}' is not a layer of ARCHITECTURE.md")
                continue
            room = rel[1] if layer == "search" and len(rel) > 2 else None
            if layer == "search" and room not in ROOMS:
                bad.append(f"{path}: search/ files live in one of its rooms ({', '.join(ROOMS)})")
                continue
            for n, line in enumerate(open(path, encoding="utf-8"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                target = m.group(1).split("/")
                if target[0] not in LAYERS:
                    bad.append(f"{path}:{n}: includes '{m.group(1)}', outside src/")
                elif target[0] not in layers[layer]:
                    bad.append(f"{path}:{n}: {layer}/ includes '{m.group(1)}' (a layer above or beside it)")
                elif layer == "search" and target[0] == "search":
                    troom = target[1] if len(target) > 2 else None
                    if troom not in rooms[room]:
                        bad.append(f"{path}:{n}: search/{room}/ includes '{m.group(1)}' (a room above or beside it)")
    for b in bad:
        print(b)
    print(f"check_includes: {len(bad)} include(s) against the layers")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "src"))
