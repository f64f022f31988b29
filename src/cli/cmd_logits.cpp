// `bosch logits MODEL --tokens "1 10 20 ..." [--json OUT]`: the logits of every position of one
// prefill (full attention), for comparing engines. JSON: {"tokens": [...], "logits": [[n_vocab]
// per position]}, floats printed with 9 significant digits (they round-trip exactly).
#include <charconv>
#include <cstdio>

#include <fmt/format.h>

#include "cli/command.h"
#include "kernels/ops.h"
#include "model/model.h"
#include "util/atomic_file.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch::cli {
namespace {

struct LogitsOptions {
  std::string model, tokens, json;
};

// Integers separated by spaces or commas, each in [0, vocab).
std::vector<int32_t> parse_tokens(const std::string& s, int vocab) {
  std::vector<int32_t> out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == ' ' || s[i] == ',' || s[i] == '\t' || s[i] == '\n') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != ',' && s[j] != '\t' && s[j] != '\n') ++j;
    int64_t v = -1;
    auto [p, ec] = std::from_chars(s.data() + i, s.data() + j, v);
    check(ec == std::errc() && p == s.data() + j && v >= 0 && v < vocab,
          "--tokens: \"{}\" is not a token id (expected integers in [0, {}))", excerpt(s.substr(i, j - i)), vocab);
    out.push_back(static_cast<int32_t>(v));
    i = j;
  }
  check(!out.empty(), "--tokens: no token ids given");
  return out;
}

void run_logits(const LogitsOptions& o) {
  auto m = Model::load(resolve_model(o.model));
  const int V = m->config().vocab_size;
  const std::vector<int32_t> tokens = parse_tokens(o.tokens, V);
  const std::vector<float> logits = m->forward_all(tokens, m->full_plan());
  if (!o.json.empty()) {
    std::string js = fmt::format("{{\"model\": \"{}\", \"n_vocab\": {}, \"tokens\": [{}],\n \"logits\": [\n",
                                 excerpt(m->source(), 200), V, fmt::join(tokens, ", "));
    for (size_t t = 0; t < tokens.size(); ++t) {
      js += "  [";
      for (int v = 0; v < V; ++v) fmt::format_to(std::back_inserter(js), "{}{:.9g}", v ? ", " : "", logits[t * V + v]);
      js += t + 1 < tokens.size() ? "],\n" : "]\n";
    }
    js += " ]}\n";
    write_file_atomic(o.json, js);
  }
  fmt::print("{:>6} {:>8} {:>8} {:>12} {:>12}\n", "pos", "token", "argmax", "max logit", "logsumexp");
  for (size_t t = 0; t < tokens.size(); ++t) {
    const float* row = &logits[t * V];
    int best = 0;
    for (int v = 1; v < V; ++v)
      if (row[v] > row[best]) best = v;
    fmt::print("{:>6} {:>8} {:>8} {:>12.6f} {:>12.6f}\n", t, tokens[t], best, row[best], log_sum_exp(row, V));
  }
  if (!o.json.empty()) fmt::print("wrote {} x {} logits to {}\n", tokens.size(), V, o.json);
}

CommandRegistrar reg("logits", "print the logits of every position of a token sequence (--json: all of them)",
                     [](CLI::App& app) {
  auto o = std::make_shared<LogitsOptions>();
  app.add_option("model", o->model, "a .gguf file or Hugging Face directory (default: the embedded model)");
  app.add_option("--tokens", o->tokens, "token ids, separated by spaces or commas (no BOS is added)")->required();
  app.add_option("--json", o->json, "write {\"tokens\": [...], \"logits\": [[n_vocab floats] per position]} here");
  app.footer("One prefill with full attention, float32 activations; weights in the file's own type.");
  app.callback([o] { run_logits(*o); });
});

}  // namespace
}  // namespace bosch::cli
