#include "tasks/recall_drill.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "tasks/prompt_fit.h"
#include "util/error.h"

namespace bosch {

namespace {

struct Pair {
  std::string key, value;
  bool niah_wording = false;
  double fact_at = 0;  // relative position of the fact in the filler (0..1)
};

struct Query {
  int pair = 0;
  double at = 0;  // relative position, after the pair's fact
  bool echo = false;
};

}  // namespace

TrainText make_recall_drill(const Tokenizer& tok, int length, Split split, uint64_t seed,
                            const Haystack& haystack, const DrillOptions& opt) {
  check(length >= 32, "drill: length must be at least 32 tokens, got {}", length);
  TaskRng rng(hash_combine(seed, 0xd0111));
  const int n_pairs = std::max(1, static_cast<int>(opt.pairs_per_1k_tokens * length / 1000.0 + 0.5));
  std::vector<Pair> pairs;
  std::set<std::string> seen;
  while (static_cast<int>(pairs.size()) < n_pairs) {
    Pair p;
    p.key = draw_word_key(split, rng);
    if (!seen.insert(p.key).second) continue;
    p.value = rng.uniform01() < opt.uuid_share ? draw_uuid(split, rng) : draw_number(split, rng, 7);
    p.niah_wording = rng.uniform01() < opt.niah_wording_share;
    p.fact_at = 0.8 * rng.uniform01();
    pairs.push_back(p);
  }
  std::vector<Query> queries;
  const int n_queries = std::max(1, static_cast<int>(opt.queries_per_fact * n_pairs + 0.5));
  for (int q = 0; q < n_queries; ++q) {
    int i = static_cast<int>(rng.below(pairs.size()));
    double lo = pairs[i].fact_at;
    double at = lo + (1.0 - lo) * rng.uniform01();
    queries.push_back({i, at, rng.uniform01() < opt.echo_share});
  }
  // Events at sentence boundaries; facts before questions at the same boundary.
  struct Event {
    double at;
    int kind;  // 0 fact, 1 question
    int index;
  };
  std::vector<Event> events;
  for (int i = 0; i < n_pairs; ++i) events.push_back({pairs[i].fact_at, 0, i});
  for (int q = 0; q < n_queries; ++q) events.push_back({queries[q].at, 1, q});
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.at != b.at ? a.at < b.at : a.kind < b.kind;
  });

  Haystack::Stream stream = haystack.stream(TaskRng(hash_combine(seed, 0x4a58)));
  std::vector<std::string> sentences;
  // Builds the text with k filler sentences and the first m events.
  auto build = [&](size_t k, size_t m, TrainText* out) {
    while (sentences.size() < k) sentences.push_back(stream.next());
    std::string text;
    std::vector<std::pair<size_t, size_t>> spans;
    auto put = [&](const std::string& s) {
      if (!text.empty()) text += ' ';
      text += s;
    };
    size_t e = 0;
    for (size_t i = 0; i <= k; ++i) {
      while (e < m && static_cast<size_t>(events[e].at * k + 0.5) <= i) {
        const Event& ev = events[e++];
        const Pair& p = pairs[ev.kind == 0 ? ev.index : queries[ev.index].pair];
        const bool echo = ev.kind == 1 && queries[ev.index].echo;
        if (ev.kind == 0) {
          put(p.niah_wording ? fmt::format("One of the special magic numbers for {} is: {}.", p.key, p.value)
                             : fmt::format("{}: {}.", p.key, p.value));
        } else {
          put(p.niah_wording
                  ? fmt::format("The special magic number for {} mentioned in the provided text is:", p.key)
                  : fmt::format("{}{}", p.key, echo ? ":" : "?"));
          text += ' ';
          spans.push_back({text.size(), text.size() + p.value.size()});
          text += p.value + ".";
        }
      }
      if (i < k) put(sentences[i]);
    }
    if (out) {
      out->text = text;
      out->answer_spans = spans;
    }
    return tok.encode(text, tok.adds_bos()).size();
  };
  // Drop trailing events until the events alone fit, then fill with as much haystack as fits.
  size_t m = events.size();
  while (m > 1 && build(0, m, nullptr) > static_cast<size_t>(length)) --m;
  check(build(0, m, nullptr) <= static_cast<size_t>(length), "drill: length {} cannot hold one fact", length);
  int k = largest_fitting(length / 40, [&](int kk) { return build(kk, m, nullptr) <= static_cast<size_t>(length); });
  TrainText t;
  t.n_tokens = build(k, m, &t);
  return t;
}

}  // namespace bosch
