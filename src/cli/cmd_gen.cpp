// `bosch gen [MODEL] --suite niah[:families] ... --jsonl OUT`: writes NIAH samples as JSONL
// (prompt text and ids, answers text and ids, family, length, depth, keys/values), so other
// tools can use exactly the samples bosch scores. Only the model's tokenizer is read.
// `bosch gen --train ...`: training text {"text", "answer_spans"} from the train split, family
// mqar by default (niah families give their prompt + answers as text).
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/command.h"
#include "tasks/copy_text.h"
#include "tasks/mqar.h"
#include "tasks/recall_drill.h"
#include "tasks/niah.h"
#include "tokenizer/tokenizer.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/progress.h"

namespace bosch::cli {
namespace {

struct GenOptions {
  std::string model, suite, haystack = "markov", split, jsonl;
  std::vector<int> lengths = {1024};
  int depths = 11, samples = 1, pairs = 16, queries = 8;
  double echo_share = 0.0, drill_density = DrillOptions{}.pairs_per_1k_tokens,
         niah_share = DrillOptions{}.niah_wording_share;
  uint64_t seed = 0;
  bool no_chat = false, train = false;
};

void run_gen(const GenOptions& o) {
  check(!o.jsonl.empty(), "gen: give --jsonl OUT (or --jsonl - for stdout)");
  std::string suite = o.suite.empty() ? (o.train ? "mqar" : "niah") : o.suite;
  std::string split_arg = o.split.empty() ? (o.train ? "train" : "test") : o.split;
  Split split = parse_split(split_arg);
  check(!o.train || split == Split::train, "gen --train writes training text: --split must be train, got {}", split_arg);
  // "mqar" is a training-only family; it may stand alone or be listed among niah families.
  bool mqar = false, drill = false, copy = false;
  std::string niah_suite;
  if (suite == "mqar") {
    mqar = true;
  } else if (suite == "drill") {
    drill = true;
  } else if (suite == "copy") {
    copy = true;
  } else {
    niah_suite = suite;
    for (const char* tag : {",mqar", "mqar,"}) {
      auto at = niah_suite.find(tag);
      if (at != std::string::npos) niah_suite.erase(at, 5), mqar = true;
    }
  }
  check(!mqar || o.train, "gen: family mqar is training text: use --train");
  check(!drill || o.train, "gen: the recall drill is training text: use --train");
  check(!copy || o.train, "gen: copy text is training text: use --train");

  auto tok = load_tokenizer(resolve_model(o.model));
  Haystack haystack = Haystack::from_arg(o.haystack);
  std::string out;
  size_t n = 0;
  if (!niah_suite.empty()) {
    NiahOptions no;
    no.families = parse_niah_suite(niah_suite);
    no.lengths = o.lengths;
    no.depths = depth_grid(o.depths);
    no.samples = o.samples;
    no.seed = o.seed;
    no.split = split;
    no.text_haystack = haystack;
    no.chat = chat_wrap_for(*tok, !o.no_chat);
    for (const auto& s : generate_niah(*tok, no)) {
      out += (o.train ? train_text_to_json(train_text_from_sample(s)) : sample_to_json(s)).dump() + "\n";
      ++n;
    }
  }
  // One training text per (length, sample); the salt keeps each suite's seeds apart.
  auto each_text = [&](const char* what, uint64_t salt, auto make) {
    Progress progress(what, o.lengths.size() * o.samples);
    for (int len : o.lengths)
      for (int i = 0; i < o.samples; ++i) {
        uint64_t seed = hash_combine(hash_combine(hash_combine(o.seed, salt), len), i);
        out += train_text_to_json(make(len, seed)).dump() + "\n";
        ++n;
        progress.add();
      }
  };
  if (mqar) {
    MqarOptions mo{o.pairs, o.queries};
    each_text("generating mqar text", 0x6d716172,
              [&](int len, uint64_t seed) { return make_mqar_text(*tok, len, split, seed, haystack, mo); });
  }
  if (drill) {
    DrillOptions dopt;
    dopt.echo_share = o.echo_share;
    dopt.pairs_per_1k_tokens = o.drill_density;
    dopt.niah_wording_share = o.niah_share;
    each_text("generating recall drill text", 0xd2111,
              [&](int len, uint64_t seed) { return make_recall_drill(*tok, len, split, seed, haystack, dopt); });
  }
  if (copy)
    each_text("generating copy text", 0xc0b1e,
              [&](int len, uint64_t seed) { return make_copy_text(*tok, len, split, seed, haystack); });
  if (o.jsonl == "-") std::fwrite(out.data(), 1, out.size(), stdout);
  else write_file_atomic(o.jsonl, out);
  std::fprintf(stderr, "bosch gen: %zu records (%s split) -> %s\n", n, split_name(split), o.jsonl.c_str());
}

CommandRegistrar reg("gen", "write NIAH samples (or training text with --train) as JSONL", [](CLI::App& app) {
  auto o = std::make_shared<GenOptions>();
  app.add_option("model", o->model, "the model whose tokenizer sets the lengths (default: the embedded model)");
  app.add_option("--suite", o->suite, "niah, niah:FAMILY,... ; with --train also mqar (the default there), drill (dense recall) or copy (repeated random strings)");
  app.add_option("--lengths", o->lengths, "lengths in tokens, e.g. 1024,2048")->delimiter(',')->check(CLI::Range(16, 1 << 24));
  app.add_option("--depths", o->depths, "number of needle depths, evenly from 0% to 100%")->check(CLI::Range(1, 1001));
  app.add_option("--samples", o->samples, "samples per (family, length, depth); mqar: per length")->check(CLI::Range(1, 1 << 24));
  app.add_option("--seed", o->seed, "generator seed");
  app.add_option("--split", o->split, "train, calib or test (default test; train with --train)");
  app.add_option("--haystack", o->haystack, "text haystack: markov (default), noise, or a UTF-8 text file");
  app.add_option("--pairs", o->pairs, "mqar: key-value needles per text")->check(CLI::Range(1, 100000));
  app.add_option("--queries", o->queries, "mqar: questions per text")->check(CLI::Range(1, 100000));
  app.add_option("--echo-share", o->echo_share, "drill: share of questions that repeat the fact's wording")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--drill-density", o->drill_density, "drill: facts per 1000 tokens")->check(CLI::Range(0.1, 200.0));
  app.add_option("--niah-wording-share", o->niah_share, "drill: share of facts and questions in the NIAH wording")
      ->check(CLI::Range(0.0, 1.0));
  app.add_flag("--no-chat-template", o->no_chat, "do not wrap prompts in the model's chat template");
  app.add_flag("--train", o->train, "write training text {text, answer_spans} (train split)");
  app.add_option("--jsonl", o->jsonl, "output JSONL file ('-' for stdout)")->required();
  app.callback([o] { run_gen(*o); });
});

}  // namespace
}  // namespace bosch::cli
