#include "tokenizer/added_tokens.h"

#include <algorithm>
#include <map>

namespace bosch {
namespace {
bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
}  // namespace

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedToken>& tokens) {
  for (const auto& t : tokens)
    if (!t.content.empty()) tokens_.push_back(t);
  // Build a byte trie in a map first, then flatten it (children sorted by byte).
  struct Tmp {
    std::map<uint8_t, int> kids;
    int token = -1;
  };
  std::vector<Tmp> tmp(1);
  for (size_t t = 0; t < tokens_.size(); ++t) {
    int n = 0;
    for (char ch : tokens_[t].content) {
      auto b = static_cast<uint8_t>(ch);
      auto it = tmp[n].kids.find(b);
      if (it == tmp[n].kids.end()) {
        tmp.push_back({});
        it = tmp[n].kids.emplace(b, static_cast<int>(tmp.size()) - 1).first;
      }
      n = it->second;
    }
    if (tmp[n].token < 0) tmp[n].token = static_cast<int>(t);  // first definition wins
    first_byte_[static_cast<uint8_t>(tokens_[t].content[0])] = true;
  }
  nodes_.resize(tmp.size());
  for (size_t n = 0; n < tmp.size(); ++n) {
    nodes_[n].token = tmp[n].token;
    nodes_[n].child_begin = static_cast<int32_t>(edges_.size());
    nodes_[n].child_count = static_cast<int32_t>(tmp[n].kids.size());
    for (auto [b, k] : tmp[n].kids) edges_.push_back({b, k});
  }
}

int32_t AddedTokenMatcher::child(int32_t node, uint8_t b) const {
  const Node& n = nodes_[node];
  auto first = edges_.begin() + n.child_begin, last = first + n.child_count;
  auto it = std::lower_bound(first, last, b, [](const Edge& e, uint8_t v) { return e.byte < v; });
  return it != last && it->byte == b ? it->node : -1;
}

std::vector<AddedTokenMatcher::Segment> AddedTokenMatcher::split(std::string_view text) const {
  std::vector<Segment> out;
  if (tokens_.empty()) {
    if (!text.empty()) out.push_back({text, -1});
    return out;
  }
  size_t start = 0, i = 0;
  const size_t n = text.size();
  bool strip_next = false;  // previous token had rstrip
  auto push_text = [&](size_t a, size_t b) {
    std::string_view s = text.substr(a, b - a);
    if (strip_next)
      while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
    strip_next = false;
    if (!s.empty()) out.push_back({s, -1});
  };
  while (i < n) {
    if (!first_byte_[static_cast<uint8_t>(text[i])]) { ++i; continue; }
    int32_t node = 0, match = -1;
    size_t match_end = i;
    for (size_t j = i; j < n; ++j) {
      node = child(node, static_cast<uint8_t>(text[j]));
      if (node < 0) break;
      if (nodes_[node].token >= 0) { match = nodes_[node].token; match_end = j + 1; }
    }
    if (match < 0) { ++i; continue; }
    const AddedToken& t = tokens_[match];
    size_t text_end = i;
    if (t.lstrip)
      while (text_end > start && is_ws(text[text_end - 1])) --text_end;
    push_text(start, text_end);
    out.push_back({text.substr(i, match_end - i), t.id});
    strip_next = t.rstrip;
    i = start = match_end;
  }
  push_text(start, n);
  return out;
}

}  // namespace bosch
