"""GGUF exports checked by llama.cpp itself (node-llama-cpp 3.22.1, CPU prebuilt from npm).

For stories260K (../shared) and random Qwen2- and Qwen3-MoE-shaped models from `bosch make-random --format gguf`:
the unmasked file and its `bosch export-mask --format gguf` copy must load in llama.cpp, the
greedy tokens of llama.cpp and `bosch generate --temperature 0` on the unmasked file must be the
same, and the masked copy must generate (llama.cpp ignores bosch.* keys, so the same tokens as
the unmasked file) while `bosch info` on it shows the mask. Exit 77 (ctest SKIP) with a loud
SKIPPED line when node/npm or the registry is unavailable.
Usage: check_gguf_llama_cpp.py BOSCH_BIN BUILD_DIR SOURCE_DIR
"""
import fcntl
import json
import os
import shutil
import subprocess
import sys

SKIP = 77
BOSCH, BUILD, SRC = sys.argv[1], sys.argv[2], sys.argv[3]
HERE = os.path.join(SRC, "tests", "consumers")
INSTALL = os.path.join(BUILD, "consumers")
WORK = os.path.join(BUILD, "consumers-work")
STORIES = os.path.join(SRC, "..", "shared", "models", "stories260K.gguf")
N = 24


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(SKIP)


def run(*args, **kw):
    p = subprocess.run(list(args), capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"FAILED: {' '.join(args)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def install():
    """npm install of the pinned package.json into BUILD/consumers, once (stamp = package.json)."""
    if not shutil.which("node") or not shutil.which("npm"):
        skip("node/npm not installed (scripts/install-deps.sh installs them)")
    os.makedirs(INSTALL, exist_ok=True)
    pkg = open(os.path.join(HERE, "package.json")).read()
    stamp = os.path.join(INSTALL, "package.json")
    marker = os.path.join(INSTALL, "node_modules", "node-llama-cpp", "package.json")
    with open(os.path.join(INSTALL, ".install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # ctest -j: one install
        if os.path.exists(marker) and os.path.exists(stamp) and open(stamp).read() == pkg:
            return
        open(stamp, "w").write(pkg)
        # Only the CPU prebuilt (a direct dependency); --omit=optional skips the CUDA/Vulkan ones
        # (700 MB). SKIP_DOWNLOAD: never fall back to fetching and building llama.cpp.
        env = dict(os.environ, NODE_LLAMA_CPP_SKIP_DOWNLOAD="true")
        p = subprocess.run(["timeout", "600", "npm", "install", "--no-audit", "--no-fund", "--omit=optional",
                            "--loglevel=error"], cwd=INSTALL, env=env, capture_output=True, text=True)
        if p.returncode != 0 or not os.path.exists(marker):
            os.remove(stamp)
            skip(f"npm install of node-llama-cpp into {INSTALL} failed (registry unreachable?): "
                 f"exit {p.returncode}\n{(p.stdout + p.stderr)[-1500:]}")


def info(model):
    out = run(BOSCH, "info", model).stdout
    fields = dict(line.split(None, 1) for line in out.splitlines() if len(line.split(None, 1)) == 2)
    return out, fields


def write_mask(model, path):
    """A mixed mask (about half the KV heads SWA, W 8, S 2) for `model`, as a bosch-mask file."""
    _, f = info(model)
    layers = int(f["layers"])
    q, kv = f["heads"].split(" query, ")
    n_q, n_kv = int(q), int(kv.split()[0])
    head_dim = int(f["heads"].rsplit("head dim ", 1)[1])
    swa = [[(l + h) % 2 for h in range(n_kv)] for l in range(layers)]
    mask = {"format": "bosch-mask", "version": 1,
            "model": {"arch": f["architecture"], "n_layers": layers, "n_heads": n_q, "n_kv_heads": n_kv,
                      "head_dim": head_dim, "identity": f["identity"]},
            "window": 8, "sinks": 2, "target_ratio": 0.5, "swa": swa, "provenance": {"by": __file__}}
    json.dump(mask, open(path, "w"))
    return sum(map(sum, swa))


def bosch_greedy(model, ids):
    out = run(BOSCH, "generate", model, "--ids", " ".join(map(str, ids)), "--print-ids",
              "--max-tokens", str(N), "--temperature", "0", "--mask", "full").stdout
    return [int(t) for t in out.split()]


def main():
    install()
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    cases = []
    rand = os.path.join(WORK, "qwen2-tiny.gguf")
    run(BOSCH, "make-random", "--arch", "qwen2", "--like", "tiny", "--format", "gguf", "--dtype", "f32",
        "--seed", "3", "--out", rand)
    cases.append(("random qwen2 tiny", rand, "hello world", [104, 101, 108, 108, 111, 279, 111, 114, 108, 100]))
    # qwen3moe: llama.cpp reads the stacked expert tensors and routes as bosch does.
    moe = os.path.join(WORK, "qwen3moe-tiny.gguf")
    run(BOSCH, "make-random", "--arch", "qwen3moe", "--like", "tiny", "--format", "gguf", "--dtype", "f32",
        "--seed", "3", "--out", moe)
    cases.append(("random qwen3moe tiny", moe, "hello world", [104, 101, 108, 108, 111, 279, 111, 114, 108, 100]))
    if os.path.exists(STORIES):
        cases.append(("stories260K", STORIES, "Once upon a time", None))
    else:
        print(f"SKIPPED (part): {STORIES} not found (../shared absent); checking the random model only")
    requests, expect = [], []
    for name, model, text, ids in cases:
        if ids is None:  # the prompt as bosch tokenizes it
            ids = [int(t) for t in run(BOSCH, "tokenize", model, input=text).stdout.split()]
        mask = os.path.join(WORK, name.replace(" ", "_") + ".mask.json")
        n_swa = write_mask(model, mask)
        masked = os.path.join(WORK, name.replace(" ", "_") + ".masked.gguf")
        run(BOSCH, "export-mask", mask, "--format", "gguf", "--model", model, "--out", masked)
        out, f = info(masked)
        if "metadata" not in f.get("mask", "") or f"{n_swa}/" not in f.get("mask", ""):
            sys.exit(f"FAILED: bosch info {masked} does not show the mask ({n_swa} SWA heads):\n{out}")
        print(f"{name}: bosch info on the masked copy: " +
              f.get("mask", ""))
        requests += [{"model": model, "ids": ids, "n": N, "text": text}, {"model": masked, "ids": ids, "n": N}]
        expect.append((name, model, masked, ids, text, bosch_greedy(model, ids)))
    req = os.path.join(WORK, "request.json")
    json.dump(requests, open(req, "w"))
    env = dict(os.environ, NODE_PATH=os.path.join(INSTALL, "node_modules"), NODE_LLAMA_CPP_SKIP_DOWNLOAD="true")
    # The script must resolve node-llama-cpp from the install dir (ESM ignores NODE_PATH): run a copy there.
    script = os.path.join(INSTALL, "llama_generate.mjs")
    shutil.copyfile(os.path.join(HERE, "llama_generate.mjs"), script)
    p = run("timeout", "900", "node", script, req, env=env)
    res = json.loads(p.stdout.strip().splitlines()[-1])
    print(f"llama.cpp (node-llama-cpp 3.22.1, llama.cpp release {res['llama_cpp'].get('release')})")
    bad = 0
    for i, (name, model, masked, ids, text, ours) in enumerate(expect):
        plain, mk = res["results"][2 * i], res["results"][2 * i + 1]
        for label, r in (("unmasked", plain), ("masked copy", mk)):
            if "error" in r:
                print(f"FAILED: {name} {label}: llama.cpp did not load/generate: {r['error']}")
                bad += 1
        if bad:
            continue
        print(f"{name}: prompt ids {ids}\n  bosch     {ours}\n  llama.cpp {plain['tokens']}\n"
              f"  llama.cpp on the masked copy {mk['tokens']}")
        if plain["tokens"] != ours:
            print(f"FAILED: {name}: greedy tokens differ between bosch and llama.cpp")
            bad += 1
        if mk["tokens"] != plain["tokens"]:
            print(f"FAILED: {name}: llama.cpp generates differently on the masked copy (bosch.* keys are "
                  "metadata only and must not change what llama.cpp computes)")
            bad += 1
        # The tokenizers agree too (llama.cpp's tokenize() adds no BOS; stories260K's prompt has one).
        want = ids[1:] if name == "stories260K" else ids
        if plain["tokenized"] != want:
            print(f"FAILED: {name}: llama.cpp tokenizes {text!r} as {plain['tokenized']}, bosch as {want}")
            bad += 1
    if bad:
        sys.exit(1)
    print("OK")


main()
