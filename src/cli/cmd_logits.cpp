// `bosch logits MODEL --tokens "1 10 20 ..." [--json OUT]`: the logits of every position of one
// prefill (full attention), for comparing engines. JSON: {"tokens": [...], "logits": [[n_vocab]
// per position]}, written by the JSON library (each float exact: the double it widens to).
#include <cmath>
#include <charconv>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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
    // Through the JSON library: the path is escaped; a non-finite logit is a broken model, not
    // a number to print.
    nlohmann::json rows = nlohmann::json::array();
    for (size_t t = 0; t < tokens.size(); ++t) {
      nlohmann::json row = nlohmann::json::array();
      for (int v = 0; v < V; ++v) {
        const float x = logits[t * V + v];
        check(std::isfinite(x), "logits: the model produced {} at position {}, token {}; its weights or config "
              "are broken", x, t, v);
        row.push_back(x);
      }
      rows.push_back(std::move(row));
    }
    const nlohmann::json doc{{"model", m->source()}, {"n_vocab", V}, {"tokens", tokens}, {"logits", std::move(rows)}};
    const std::string js = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
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
  add_opt(app, "model", o->model, "a .gguf file or Hugging Face directory (default: the embedded model)");
  add_opt(app, "--tokens", o->tokens, "token ids, separated by spaces or commas (no BOS is added)")->required();
  add_opt(app, "--json", o->json, "write {\"tokens\": [...], \"logits\": [[n_vocab floats] per position]} here");
  app.footer("One prefill with full attention, float32 activations; weights in the file's own type.");
  app.callback([o] { run_logits(*o); });
});

}  // namespace
}  // namespace bosch::cli
