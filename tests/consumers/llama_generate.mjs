// Greedy generation with llama.cpp (node-llama-cpp's prebuilt CPU binary) from raw token ids, so
// the comparison with bosch does not depend on either tokenizer.
// Usage: node llama_generate.mjs REQUEST.json  with [{"model", "ids": [...], "n", "text"?}, ...]
// Prints one JSON object: {"llama_cpp": release, "results": [{"tokens", "tokenized"?} | {"error"}]}.
import {readFileSync} from "node:fs";
import {getLlama} from "node-llama-cpp";

const requests = JSON.parse(readFileSync(process.argv[2], "utf8"));
// build "never": only the prebuilt binary from npm; a source build would need the network and minutes.
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const results = [];
for (const r of requests) {
  try {
    const model = await llama.loadModel({modelPath: r.model});
    const ctx = await model.createContext({contextSize: 256, sequences: 1});
    const seq = ctx.getSequence();
    const tokens = [];
    for await (const t of seq.evaluate(r.ids, {temperature: 0, yieldEogToken: true})) {
      tokens.push(t);
      if (tokens.length >= r.n) break;
    }
    const out = {tokens};
    if (r.text !== undefined) out.tokenized = model.tokenize(r.text, false);
    results.push(out);
    await ctx.dispose();
    await model.dispose();
  } catch (e) {
    results.push({error: String(e && e.message ? e.message : e)});
  }
}
console.log(JSON.stringify({llama_cpp: llama.llamaCppRelease, results}));
await llama.dispose();
