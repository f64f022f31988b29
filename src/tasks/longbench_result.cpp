#include "tasks/longbench_result.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "util/error.h"

namespace bosch {

using nlohmann::json;

LongBenchDatasetResult score_longbench_dataset(const longbench::DatasetFile& file,
                                               const std::vector<std::string>& predictions) {
  check(predictions.size() == file.samples.size(),
        "longbench: {} predictions for {} samples of {}", predictions.size(), file.samples.size(),
        file.path);
  LongBenchDatasetResult r;
  r.dataset = file.task->name;
  r.file = file.path;
  r.metric = longbench::metric_name(file.task->metric);
  r.longbench_e = file.longbench_e;
  for (size_t i = 0; i < predictions.size(); ++i) {
    const auto& s = file.samples[i];
    LongBenchSampleResult sr;
    sr.id = s.id;
    sr.prediction = predictions[i];
    sr.length = s.length;
    sr.score = longbench::score_sample(file.task->metric, file.task->first_line, predictions[i],
                                       s.answers, s.all_classes);
    r.samples.push_back(std::move(sr));
  }
  aggregate_longbench_dataset(r);
  return r;
}

void aggregate_longbench_dataset(LongBenchDatasetResult& r) {
  r.n = int(r.samples.size());
  double total = 0;
  std::array<double, 3> sums{};
  r.bucket_n = {0, 0, 0};
  for (const auto& s : r.samples) {
    total += s.score;
    int b = s.length < 4000 ? 0 : s.length < 8000 ? 1 : 2;
    sums[b] += s.score;
    r.bucket_n[b] += 1;
  }
  r.score = r.n ? 100.0 * total / r.n : 0.0;
  for (int b = 0; b < 3; ++b)  // np.mean([]) is nan
    r.bucket_score[b] = r.bucket_n[b] ? 100.0 * sums[b] / r.bucket_n[b]
                                      : std::numeric_limits<double>::quiet_NaN();
}

void aggregate_longbench(LongBenchResult& r) {
  double sum = 0;
  for (const auto& d : r.datasets) sum += d.score;
  r.average = r.datasets.empty() ? 0.0 : sum / double(r.datasets.size());
}

json LongBenchResult::to_json(bool with_samples) const {
  json j;
  j["suite"] = "longbench";
  j["average"] = average;
  j["seconds"] = seconds;
  json list = json::array();
  for (const auto& d : datasets) {
    json jd;
    jd["dataset"] = d.dataset;
    jd["file"] = d.file;
    jd["metric"] = d.metric;
    jd["longbench_e"] = d.longbench_e;
    jd["n"] = d.n;
    jd["score"] = d.score;
    json buckets = json::object();
    for (int b = 0; b < 3; ++b) {
      json jb;
      jb["n"] = d.bucket_n[b];
      jb["score"] = std::isnan(d.bucket_score[b]) ? json(nullptr) : json(d.bucket_score[b]);
      buckets[LongBenchDatasetResult::kBucketNames[b]] = jb;
    }
    jd["length_buckets"] = buckets;
    if (with_samples) {
      json js = json::array();
      for (const auto& s : d.samples)
        js.push_back({{"_id", s.id}, {"pred", s.prediction}, {"score", s.score},
                      {"length", s.length}, {"prompt_tokens", s.prompt_tokens},
                      {"new_tokens", s.new_tokens}, {"truncated", s.truncated}});
      jd["samples"] = js;
    }
    list.push_back(jd);
  }
  j["datasets"] = list;
  return j;
}

std::string LongBenchResult::table() const {
  auto cell = [](double v) { return std::isnan(v) ? std::string("-") : fmt::format("{:.2f}", v); };
  std::string out = fmt::format("{:<22} {:<15} {:>5} {:>7} {:>7} {:>7} {:>7}\n", "dataset", "metric",
                                "n", "score", "0-4k", "4-8k", "8k+");
  for (const auto& d : datasets)
    out += fmt::format("{:<22} {:<15} {:>5} {:>7} {:>7} {:>7} {:>7}\n",
                       d.dataset + (d.longbench_e ? "_e" : ""), d.metric, d.n, cell(d.score),
                       cell(d.bucket_score[0]), cell(d.bucket_score[1]), cell(d.bucket_score[2]));
  out += fmt::format("{:<22} {:<15} {:>5} {:>7}\n", "average", "", "", cell(average));
  return out;
}

}  // namespace bosch
