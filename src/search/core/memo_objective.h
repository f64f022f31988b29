// An Objective that remembers every mask it scored, shared by the runs of one `bosch compare`
// (the searches of every method and the baselines' single-head sweep ask for many of the same
// masks: the references, single-head flips, each method's answer). Scores are deterministic,
// so a remembered score is the score.
#pragma once
#include <string>
#include <unordered_map>

#include "search/core/journal.h"
#include "search/core/objective.h"

namespace bosch::search {

class MemoObjective : public Objective {
 public:
  explicit MemoObjective(Objective& inner) : inner_(inner) {}
  int n_layers() const override { return inner_.n_layers(); }
  int n_heads() const override { return inner_.n_heads(); }
  MaskScore evaluate(const HeadBits& swa) override {
    const std::string key = bits_to_string(swa);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    return memo_.emplace(key, inner_.evaluate(swa)).first->second;
  }
  std::string describe() const override { return inner_.describe(); }
  ObjectiveStats stats() const override { return inner_.stats(); }

 private:
  Objective& inner_;
  std::unordered_map<std::string, MaskScore> memo_;
};

}  // namespace bosch::search
