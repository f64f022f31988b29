// `bosch gen [MODEL] --suite niah[:families] ... --jsonl OUT`: writes NIAH samples as JSONL
// (prompt text and ids, answers text and ids, family, length, depth, keys/values), so other
// tools can use exactly the samples bosch scores. Only the model's tokenizer is read.
// `bosch gen --train ...`: the same samples from the train split as training text {"text",
// "answer_spans"} (prompt + answers), the data of tools/train/make_data.sh.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/command.h"
#include "tasks/niah.h"
#include "tasks/train_text.h"
#include "tokenizer/tokenizer.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace bosch::cli {
namespace {

struct GenOptions {
  std::string model, suite = "niah", haystack = "markov", split, jsonl;
  std::vector<int> lengths = {1024};
  int depths = 11, samples = 1;
  uint64_t seed = 0;
  bool no_chat = false, train = false;
};

void run_gen(const GenOptions& o) {
  check(!o.jsonl.empty(), "gen: give --jsonl OUT (or --jsonl - for stdout)");
  std::string split_arg = o.split.empty() ? (o.train ? "train" : "test") : o.split;
  Split split = parse_split(split_arg);
  check(!o.train || split == Split::train, "gen --train writes training text: --split must be train, got {}", split_arg);

  auto tok = load_tokenizer(resolve_model(o.model));
  const NiahOptions no = niah_options(o.suite, o.lengths, o.depths, o.samples, o.seed, split, o.haystack,
                                      chat_wrap_for(*tok, !o.no_chat));
  std::string out;
  size_t n = 0;
  for (const auto& s : generate_niah(*tok, no)) {
    out += (o.train ? train_text_to_json(train_text_from_sample(s)) : sample_to_json(s)).dump() + "\n";
    ++n;
  }
  if (o.jsonl == "-") std::fwrite(out.data(), 1, out.size(), stdout);
  else write_file_atomic(o.jsonl, out);
  std::fprintf(stderr, "bosch gen: %zu records (%s split) -> %s\n", n, split_name(split), o.jsonl.c_str());
}

CommandRegistrar reg("gen", "write NIAH samples (or training text with --train) as JSONL", [](CLI::App& app) {
  auto o = std::make_shared<GenOptions>();
  add_opt(app, "model", o->model, "the model whose tokenizer sets the lengths (default: the embedded model)");
  add_opt(app, "--suite", o->suite, "niah (default) or niah:FAMILY,...");
  add_opt(app, "--lengths", o->lengths, "lengths in tokens, e.g. 1024,2048")->delimiter(',')->check(CLI::Range(16, 1 << 24));
  add_opt(app, "--depths", o->depths, "number of needle depths, evenly from 0% to 100%")->check(CLI::Range(1, 1001));
  add_opt(app, "--samples", o->samples, "samples per (family, length, depth)")->check(CLI::Range(1, 1 << 24));
  add_opt(app, "--seed", o->seed, "generator seed");
  add_opt(app, "--split", o->split, "train, calib or test (default test; train with --train)");
  add_opt(app, "--haystack", o->haystack, "text haystack: markov (default), noise, or a UTF-8 text file");
  app.add_flag("--no-chat-template", o->no_chat, "do not wrap prompts in the model's chat template");
  app.add_flag("--train", o->train, "write training text {text, answer_spans} (train split)");
  add_opt(app, "--jsonl", o->jsonl, "output JSONL file ('-' for stdout)")->required();
  app.callback([o] { run_gen(*o); });
});

}  // namespace
}  // namespace bosch::cli
