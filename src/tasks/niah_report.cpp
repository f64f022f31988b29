#include "tasks/niah_report.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <set>

namespace bosch {

namespace {
int permille(double depth) { return static_cast<int>(std::lround(depth * 1000)); }
std::string depth_label(int pm) { return fmt::format("{:g}%", pm / 10.0); }
}  // namespace

nlohmann::ordered_json ScoreStats::to_json() const {
  return {{"n", n}, {"exact_match", exact_match()}, {"mean_answer_logprob", mean_logprob()}};
}

std::optional<double> normalized_score(double s, double s_full, double s_allswa) {
  double den = s_full - s_allswa;
  if (std::abs(den) < 1e-12) return std::nullopt;
  return (s - s_allswa) / den;
}

void TaskReport::add(const TaskSample& sample, const TaskSampleScore& score) {
  int pm = permille(sample.depth);
  overall_.add(score);
  family_[sample.family].add(score);
  length_[sample.length].add(score);
  depth_[pm].add(score);
  cells_[{sample.family, sample.length, pm}].add(score);
}

nlohmann::ordered_json TaskReport::to_json() const {
  nlohmann::ordered_json j;
  j["exact_match"] = overall_.exact_match();
  j["mean_answer_logprob"] = overall_.mean_logprob();
  j["n_samples"] = overall_.n;
  j["per_family"] = nlohmann::ordered_json::object();
  for (const auto& [f, s] : family_) j["per_family"][f] = s.to_json();
  j["per_length"] = nlohmann::ordered_json::object();
  for (const auto& [l, s] : length_) j["per_length"][std::to_string(l)] = s.to_json();
  j["per_depth"] = nlohmann::ordered_json::object();
  for (const auto& [d, s] : depth_) j["per_depth"][fmt::format("{:g}", d / 1000.0)] = s.to_json();
  j["cells"] = nlohmann::ordered_json::array();
  for (const auto& [k, s] : cells_) {
    nlohmann::ordered_json c = {{"family", std::get<0>(k)}, {"length", std::get<1>(k)}, {"depth", std::get<2>(k) / 1000.0}};
    const nlohmann::ordered_json stats = s.to_json();
    for (const auto& [key, v] : stats.items()) c[key] = v;
    j["cells"].push_back(c);
  }
  return j;
}

std::string TaskReport::table() const {
  std::string out = fmt::format("{:<16} {:>7}", "family", "length");
  for (const auto& [d, s] : depth_) out += fmt::format(" {:>6}", depth_label(d));
  out += fmt::format(" {:>7} {:>9}\n", "mean", "logprob");
  for (const auto& [f, fs] : family_) {
    for (const auto& [l, ls] : length_) {
      ScoreStats row;
      std::string line = fmt::format("{:<16} {:>7}", f, l);
      for (const auto& [d, ds] : depth_) {
        auto it = cells_.find({f, l, d});
        if (it == cells_.end()) { line += fmt::format(" {:>6}", "-"); continue; }
        line += fmt::format(" {:>6.2f}", it->second.exact_match());
        row.n += it->second.n;
        row.score_sum += it->second.score_sum;
        row.logprob_sum += it->second.logprob_sum;
      }
      if (row.n) out += line + fmt::format(" {:>7.3f} {:>9.3f}\n", row.exact_match(), row.mean_logprob());
    }
  }
  out += fmt::format("{:<16} {:>7}", "all", "");
  for (const auto& [d, ds] : depth_) out += fmt::format(" {:>6.2f}", ds.exact_match());
  out += fmt::format(" {:>7.3f} {:>9.3f}\n", overall_.exact_match(), overall_.mean_logprob());
  return out;
}

Heatmap TaskReport::heatmap(const std::string& title) const {
  Heatmap h;
  h.title = title;
  h.x_label = "context length (tokens)";
  h.y_label = "needle depth";
  for (const auto& [d, s] : depth_) h.row_labels.push_back(depth_label(d));
  for (const auto& [l, s] : length_) h.col_labels.push_back(std::to_string(l));
  for (const auto& [d, ds] : depth_)
    for (const auto& [l, ls] : length_) {
      ScoreStats c;
      for (const auto& [f, fs] : family_) {
        auto it = cells_.find({f, l, d});
        if (it == cells_.end()) continue;
        c.n += it->second.n;
        c.score_sum += it->second.score_sum;
      }
      h.values.push_back(c.n ? c.exact_match() : std::numeric_limits<double>::quiet_NaN());
    }
  return h;
}

}  // namespace bosch
