#include "tasks/mqar.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "tasks/prompt_fit.h"
#include "util/error.h"

namespace bosch {

TrainText make_mqar_text(const Tokenizer& tok, int length, Split split, uint64_t seed,
                         const Haystack& haystack, const MqarOptions& opt) {
  check(opt.n_pairs >= 1 && opt.n_queries >= 1 && opt.n_queries <= opt.n_pairs,
        "mqar: need 1 <= queries ({}) <= pairs ({})", opt.n_queries, opt.n_pairs);
  TaskRng rng(seed);
  std::vector<std::string> keys, values;
  std::set<std::string> seen;
  while (static_cast<int>(keys.size()) < opt.n_pairs) {
    std::string k = draw_word_key(split, rng);
    if (!seen.insert(k).second) continue;
    keys.push_back(k);
    values.push_back(draw_number(split, rng, 7));
  }
  std::vector<double> depth(opt.n_pairs);
  for (auto& d : depth) d = rng.uniform01();
  std::vector<int> asked(opt.n_pairs);
  for (int i = 0; i < opt.n_pairs; ++i) asked[i] = i;
  for (int i = opt.n_pairs - 1; i > 0; --i) std::swap(asked[i], asked[rng.below(i + 1)]);
  asked.resize(opt.n_queries);

  Haystack::Stream stream = haystack.stream(TaskRng(hash_combine(seed, 0x4a57)));
  std::vector<std::string> sentences;
  auto build = [&](size_t k, TrainText* out) {
    while (sentences.size() < k) sentences.push_back(stream.next());
    std::vector<std::pair<size_t, int>> at;
    for (int j = 0; j < opt.n_pairs; ++j) at.push_back({static_cast<size_t>(depth[j] * k + 0.5), j});
    std::stable_sort(at.begin(), at.end());
    std::string text;
    auto put = [&](const std::string& s) {
      if (!text.empty()) text += ' ';
      text += s;
    };
    size_t next = 0;
    for (size_t i = 0; i <= k; ++i) {
      while (next < at.size() && at[next].first == i) {
        int j = at[next++].second;
        put(fmt::format("One of the special magic numbers for {} is: {}.", keys[j], values[j]));
      }
      if (i < k) put(sentences[i]);
    }
    std::vector<std::pair<size_t, size_t>> spans;
    for (int j : asked) {
      put(fmt::format("The special magic number for {} mentioned in the provided text is:", keys[j]));
      text += ' ';
      spans.push_back({text.size(), text.size() + values[j].size()});
      text += values[j] + ".";
    }
    if (out) {
      out->text = text;
      out->answer_spans = spans;
    }
    return tok.encode(text, tok.adds_bos()).size();
  };
  check(build(0, nullptr) <= static_cast<size_t>(length),
        "mqar: length {} cannot hold {} pairs and {} questions ({} tokens without haystack)",
        length, opt.n_pairs, opt.n_queries, build(0, nullptr));
  int k = largest_fitting(0, [&](int kk) { return build(kk, nullptr) <= static_cast<size_t>(length); });
  TrainText t;
  t.n_tokens = build(k, &t);
  return t;
}

TrainText train_text_from_sample(const TaskSample& s) {
  TrainText t;
  t.text = s.prompt + s.continuation;
  t.n_tokens = s.n_tokens();
  size_t from = 0;
  for (const auto& a : s.answers) {
    size_t at = s.continuation.find(a.text, from);
    check(at != std::string::npos, "task sample ({}): answer '{}' not in its continuation", s.family, a.text);
    t.answer_spans.push_back({s.prompt.size() + at, s.prompt.size() + at + a.text.size()});
    from = at + a.text.size();
  }
  return t;
}

nlohmann::json train_text_to_json(const TrainText& t) {
  nlohmann::json spans = nlohmann::json::array();
  for (auto [b, e] : t.answer_spans) spans.push_back({b, e});
  return {{"text", t.text}, {"answer_spans", spans}};
}

}  // namespace bosch
