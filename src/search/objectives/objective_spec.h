// The `--objective` / `--test-objective` argument, parsed once: every place that needs to know
// what kind of data an objective scores asks this, not the string.
//   niah[:FAMILIES]        NIAH samples (calibration or test split)
//   text:FILE              -NLL on chunks of a text file
//   longbench:DIR          LongBench JSONL files
//   synthetic:LxH[:SEED]   a small planted objective (tests, smoke runs; synthetic_objective.h)
//   synthetic:SHAPE[:SEED] the search simulator at Qwen3 scale (simulator.h)
#pragma once
#include <string>

namespace bosch::search {

enum class ObjectiveKind { niah, text, longbench, planted, simulator };

struct ObjectiveSpec {
  ObjectiveKind kind = ObjectiveKind::niah;
  std::string spec;  // as given
  std::string arg;   // after the first ':' ("" for plain niah)
  bool needs_model() const { return kind != ObjectiveKind::planted && kind != ObjectiveKind::simulator; }
  bool has_needles() const { return kind == ObjectiveKind::niah || kind == ObjectiveKind::longbench; }
  bool has_test_split() const { return kind == ObjectiveKind::niah; }  // generated held-out samples
};

// Error naming `option` and the accepted forms on anything else.
ObjectiveSpec parse_objective_spec(const std::string& spec, const std::string& option = "--objective");

}  // namespace bosch::search
