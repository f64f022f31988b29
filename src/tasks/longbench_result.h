// LongBench results: per-sample scores aggregated per dataset as eval.py does (mean over
// samples of the best answer, x100) plus the LongBench-E length buckets (scorer_e), and the
// JSON form written by `bosch eval --suite longbench`.
#pragma once
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tasks/longbench_data.h"

namespace bosch {

struct LongBenchSampleResult {
  std::string id;
  std::string prediction;   // decoded generation, before the first-line rule
  double score = 0;         // [0, 1]
  int64_t length = 0;       // the sample's `length` field
  int prompt_tokens = 0;    // after truncation and chat template
  int new_tokens = 0;
  bool truncated = false;   // the prompt was middle-truncated
};

struct LongBenchDatasetResult {
  std::string dataset;      // task name ("hotpotqa")
  std::string file;
  std::string metric;       // metric_name()
  bool longbench_e = false;
  int n = 0;
  double score = 0;         // 100 * mean sample score (eval.py, before its round(., 2))
  // scorer_e buckets by `length`: [0] < 4000, [1] < 8000, [2] the rest. NaN when empty.
  static constexpr std::array<const char*, 3> kBucketNames = {"0-4k", "4-8k", "8k+"};
  std::array<double, 3> bucket_score{};
  std::array<int, 3> bucket_n{};
  std::vector<LongBenchSampleResult> samples;
};

struct LongBenchResult {
  std::vector<LongBenchDatasetResult> datasets;
  double average = 0;       // unweighted mean of the dataset scores
  double seconds = 0;
  // {"suite":"longbench","average":..,"datasets":[{dataset,score,n,metric,length_buckets,...}]}
  // NaN bucket scores are written as null; samples only when with_samples.
  nlohmann::json to_json(bool with_samples = false) const;
  // Plain-text table: dataset, metric, n, score, LongBench-E buckets; then the average.
  std::string table() const;
};

// Scores predictions (one per sample, in order) of one dataset file.
LongBenchDatasetResult score_longbench_dataset(const longbench::DatasetFile& file,
                                               const std::vector<std::string>& predictions);
// Fills `score`, `n` and the buckets of r from r.samples[i].score and .length.
void aggregate_longbench_dataset(LongBenchDatasetResult& r);
// Average over datasets.
void aggregate_longbench(LongBenchResult& r);

}  // namespace bosch
