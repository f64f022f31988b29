"""Byte-level tokenizer of the default model: one token per byte, no merges.

Decision (issue #5): the vocabulary is the 256 byte symbols of the GPT-2 byte-level alphabet
(id == byte value) plus three special tokens. With no merges, a Hugging Face byte-level BPE
tokenizer maps every byte to its own token, so tokenization is exact and trivial here
(bytes -> ids) and identical in every conforming implementation (HF tokenizers, the
JavaScript port, the C++ engine). The cost is long sequences (1 token per byte), which the
task generator accounts for by measuring lengths in bytes.

Special tokens written literally in the text (e.g. "<|im_start|>") become their special id,
as Hugging Face does for added tokens.
"""
import json
import os
import re

ENDOFTEXT = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
SPECIAL_TOKENS = [ENDOFTEXT, IM_START, IM_END]  # ids 256, 257, 258
EOT_ID = 256
VOCAB_SIZE = 256 + len(SPECIAL_TOKENS)
SPECIAL_IDS = {tok: 256 + i for i, tok in enumerate(SPECIAL_TOKENS)}


def bytes_to_unicode():
    """GPT-2's reversible byte -> printable unicode character table."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_TO_CHAR = bytes_to_unicode()


_SPECIAL_RE = re.compile("(" + "|".join(re.escape(t) for t in
                                        sorted(SPECIAL_TOKENS, key=len, reverse=True)) + ")")


def encode_with_offsets(text):
    """Returns (ids, starts): token ids and the byte offset in text.encode('utf-8') where each
    token starts. Special-token strings are matched first (leftmost, longest)."""
    ids, starts = [], []
    byte_pos = 0
    # re.split with a capturing group alternates: text, special, text, special, ..., text
    for k, part in enumerate(_SPECIAL_RE.split(text)):
        if k % 2:
            ids.append(SPECIAL_IDS[part])
            starts.append(byte_pos)
            byte_pos += len(part.encode("utf-8"))
        else:
            chunk = part.encode("utf-8")
            ids.extend(chunk)  # bytes iterate as ints: id == byte value
            starts.extend(range(byte_pos, byte_pos + len(chunk)))
            byte_pos += len(chunk)
    return ids, starts


def encode(text):
    return encode_with_offsets(text)[0]


def decode(ids):
    out = bytearray()
    for i in ids:
        if i < 256:
            out.append(i)
        else:
            out += SPECIAL_TOKENS[i - 256].encode("utf-8")
    return out.decode("utf-8", errors="replace")


def tokenizer_json():
    """The Hugging Face tokenizer.json object (byte-level BPE without merges)."""
    vocab = {BYTE_TO_CHAR[b]: b for b in range(256)}
    added = [{"id": SPECIAL_IDS[t], "content": t, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True} for t in SPECIAL_TOKENS]
    for t in SPECIAL_TOKENS:
        vocab[t] = SPECIAL_IDS[t]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                          "use_regex": False},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                    "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": []},
    }


def tokenizer_config_json(max_length):
    added = {str(SPECIAL_IDS[t]): {"content": t, "lstrip": False, "normalized": False,
                                   "rstrip": False, "single_word": False, "special": True}
             for t in SPECIAL_TOKENS}
    return {
        "add_bos_token": False,
        "add_eos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": added,
        "bos_token": ENDOFTEXT,
        "eos_token": ENDOFTEXT,
        "pad_token": ENDOFTEXT,
        "unk_token": None,
        "clean_up_tokenization_spaces": False,
        "errors": "replace",
        "model_max_length": max_length,
        "tokenizer_class": "PreTrainedTokenizerFast",
    }


def write_tokenizer_files(out_dir, max_length=4096):
    """Writes tokenizer.json and tokenizer_config.json (deterministic bytes)."""
    os.makedirs(out_dir, exist_ok=True)
    for name, obj in (("tokenizer.json", tokenizer_json()),
                      ("tokenizer_config.json", tokenizer_config_json(max_length))):
        path = os.path.join(out_dir, name)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(obj, f, ensure_ascii=False, indent=2)
            f.write("\n")
        os.replace(tmp, path)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="Write the byte-level tokenizer files.")
    ap.add_argument("out_dir")
    ap.add_argument("--max-length", type=int, default=4096)
    a = ap.parse_args()
    write_tokenizer_files(a.out_dir, a.max_length)
    print(f"wrote {a.out_dir}/tokenizer.json, tokenizer_config.json (vocab {VOCAB_SIZE})")
