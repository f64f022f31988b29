// Helpers shared by the tokenizer tests: a tiny byte-level BPE trained in the test, a naive
// reference BPE (the original GPT-2 loop), and random UTF-8 text.
#pragma once
#include <algorithm>
#include <climits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tokenizer/byte_level_bpe.h"
#include "util/utf8.h"

namespace bosch::testing {

inline std::string mapped(const std::string& bytes) {
  std::string out;
  for (unsigned char b : bytes) utf8::append(out, byte_to_unicode(b));
  return out;
}

// Learns `n_merges` merges from `corpus` (split on spaces, GPT-2 style " word" pieces) by
// counting pairs — deliberately simple; only needs to produce a consistent merge list.
inline ByteLevelBpeSpec train_tiny_bpe(const std::string& corpus, int n_merges) {
  ByteLevelBpeSpec spec;
  spec.source = "<test vocab>";
  for (int b = 0; b < 256; ++b) spec.vocab.push_back(mapped(std::string(1, char(b))));
  std::vector<std::vector<std::string>> words;
  RegexSplitter split(kGpt2SplitPattern);
  split.split(corpus, [&](std::string_view w) {
    std::vector<std::string> syms;
    for (char c : w) syms.push_back(std::string(1, c));
    words.push_back(syms);
  });
  for (int m = 0; m < n_merges; ++m) {
    std::map<std::pair<std::string, std::string>, int> count;
    for (auto& w : words)
      for (size_t i = 0; i + 1 < w.size(); ++i) ++count[{w[i], w[i + 1]}];
    if (count.empty()) break;
    auto best = std::max_element(count.begin(), count.end(), [](auto& a, auto& b) { return a.second < b.second; });
    auto [a, b] = best->first;
    spec.merges.emplace_back(mapped(a), mapped(b));
    spec.vocab.push_back(mapped(a + b));
    for (auto& w : words) {
      std::vector<std::string> out;
      for (size_t i = 0; i < w.size(); ++i) {
        if (i + 1 < w.size() && w[i] == a && w[i + 1] == b) { out.push_back(a + b); ++i; }
        else out.push_back(w[i]);
      }
      w = out;
    }
  }
  spec.splits.push_back({kGpt2SplitPattern, RegexSplitter::Behavior::Isolated});
  return spec;
}

// The original GPT-2 loop: find the lowest-ranked adjacent pair, merge every occurrence left
// to right, repeat. Returns the pieces as raw bytes.
inline std::vector<std::string> naive_bpe(const std::string& word,
                                          const std::vector<std::pair<std::string, std::string>>& merges_raw) {
  std::map<std::pair<std::string, std::string>, int> rank;
  for (size_t r = 0; r < merges_raw.size(); ++r) rank.emplace(merges_raw[r], int(r));
  std::vector<std::string> w;
  for (char c : word) w.push_back(std::string(1, c));
  while (w.size() > 1) {
    int best = INT_MAX;
    std::pair<std::string, std::string> bp;
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      auto it = rank.find({w[i], w[i + 1]});
      if (it != rank.end() && it->second < best) { best = it->second; bp = it->first; }
    }
    if (best == INT_MAX) break;
    std::vector<std::string> out;
    for (size_t i = 0; i < w.size(); ++i) {
      if (i + 1 < w.size() && w[i] == bp.first && w[i + 1] == bp.second) { out.push_back(bp.first + bp.second); ++i; }
      else out.push_back(w[i]);
    }
    w = out;
  }
  return w;
}

// Random valid UTF-8 drawn from ASCII, Latin-1 letters, Cyrillic, CJK, Hangul and emoji, with
// runs of spaces/newlines/digits. All of these ranges are NFC-stable.
inline std::string random_utf8(std::mt19937& rng, int n_chars) {
  static const std::pair<char32_t, char32_t> ranges[] = {
      {0x20, 0x7E}, {0x20, 0x7E}, {0x20, 0x7E}, {0xC0, 0xFF}, {0x410, 0x44F}, {0x4E00, 0x4FFF},
      {0xAC00, 0xAD00}, {0x1F600, 0x1F64F}, {0x30, 0x39}};
  std::string s;
  std::uniform_int_distribution<int> pick(0, int(std::size(ranges)) + 2);
  for (int i = 0; i < n_chars; ++i) {
    int r = pick(rng);
    if (r == int(std::size(ranges))) { s += std::string(rng() % 6 + 1, ' '); continue; }
    if (r == int(std::size(ranges)) + 1) { s += (rng() % 2) ? "\n" : "\t"; continue; }
    if (r == int(std::size(ranges)) + 2) r = 0;
    auto [lo, hi] = ranges[r];
    char32_t cp = lo + rng() % (hi - lo + 1);
    if (cp == 0xD7) cp = 0xC0;  // keep to letters
    utf8::append(s, cp);
  }
  return s;
}

}  // namespace bosch::testing
