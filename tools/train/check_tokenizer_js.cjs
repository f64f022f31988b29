// Checks a tokenizer.json with the reference JavaScript implementation (@lenml/tokenizers):
// encodes each case of CASES_JSON ([{"text": ..., "ids": [...]}, ...], the ids our Python
// byte mapping gives) and compares ids and the decoded text.
// Usage: NODE_PATH=/tmp/jsref/node_modules node check_tokenizer_js.cjs MODEL_DIR CASES_JSON
// (install once: cd /tmp/jsref && npm install @lenml/tokenizers). Exit status 1 on a mismatch.
"use strict";
const fs = require("fs");
const path = require("path");
const { TokenizerLoader } = require("@lenml/tokenizers");

const [modelDir, casesPath] = process.argv.slice(2);
if (!modelDir || !casesPath) {
  console.error("usage: node check_tokenizer_js.cjs MODEL_DIR CASES_JSON");
  process.exit(2);
}
const read = (p) => JSON.parse(fs.readFileSync(p, "utf8"));
const tok = TokenizerLoader.fromPreTrained({
  tokenizerJSON: read(path.join(modelDir, "tokenizer.json")),
  tokenizerConfig: read(path.join(modelDir, "tokenizer_config.json")),
});
let bad = 0;
const cases = read(casesPath);
for (const c of cases) {
  const ids = tok.encode(c.text, { add_special_tokens: true });
  const same = ids.length === c.ids.length && ids.every((v, i) => v === c.ids[i]);
  const text = ids.length ? tok.decode(ids, { skip_special_tokens: false }) : "";
  if (!same || text !== c.text) {
    bad++;
    console.error(`MISMATCH ${JSON.stringify(c.text).slice(0, 80)}\n  js  ${ids.slice(0, 40)}` +
                  `\n  py  ${c.ids.slice(0, 40)}\n  decoded ${JSON.stringify(text).slice(0, 80)}`);
  }
}
console.log(`${cases.length - bad}/${cases.length} cases agree (vocab ${tok.model.vocab.length})`);
process.exit(bad ? 1 : 0);
