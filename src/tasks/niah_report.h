// Aggregated scores of a task run: overall, per family, per length, per depth and per
// (family, length, depth) cell; as JSON, as a text table, and as the length x depth heatmap.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "tasks/scoring.h"
#include "tasks/task_sample.h"
#include "util/svg.h"

namespace bosch {

struct ScoreStats {
  int n = 0;
  double score_sum = 0, logprob_sum = 0;
  void add(const TaskSampleScore& s) { ++n; score_sum += s.score; logprob_sum += s.mean_logprob; }
  double exact_match() const { return n ? score_sum / n : 0; }
  double mean_logprob() const { return n ? logprob_sum / n : 0; }
  nlohmann::ordered_json to_json() const;  // {n, exact_match, mean_answer_logprob}
};

// (S - S_allswa) / (S_full - S_allswa); nullopt when the two references are equal.
std::optional<double> normalized_score(double s, double s_full, double s_allswa);

class TaskReport {
 public:
  void add(const TaskSample& sample, const TaskSampleScore& score);
  const ScoreStats& overall() const { return overall_; }
  const std::map<std::string, ScoreStats>& per_family() const { return family_; }
  const std::map<int, ScoreStats>& per_length() const { return length_; }

  // {"exact_match", "mean_answer_logprob", "n_samples", "per_family": {name: stats},
  //  "per_length": {"1024": stats}, "per_depth": {"0.5": stats}, "cells": [{family, length,
  //  depth, n, exact_match, mean_answer_logprob}]}
  nlohmann::ordered_json to_json() const;
  // Text table: one row per family and length, one column per depth, plus totals.
  std::string table() const;
  // Depth rows x length columns, each cell the mean score over families.
  Heatmap heatmap(const std::string& title) const;

 private:
  ScoreStats overall_;
  std::map<std::string, ScoreStats> family_;
  std::map<int, ScoreStats> length_, depth_;
  std::map<std::tuple<std::string, int, int>, ScoreStats> cells_;  // (family, length, depth‰)
};

}  // namespace bosch
