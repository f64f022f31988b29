#include "tokenizer/spm_tokenizer.h"

#include <queue>

#include "util/utf8.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch {
namespace {
const std::string kSpace = "\xE2\x96\x81";  // U+2581

int utf8_len(uint8_t b) {
  static const int lookup[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return lookup[b >> 4];
}

// "<0x41>" -> 0x41, or -1.
int parse_byte_token(const std::string& s) {
  if (s.size() != 6 || !s.starts_with("<0x") || s[5] != '>') return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  const int hi = hex(s[3]), lo = hex(s[4]);  // not stoul: it accepts "+1" and throws on "zz"
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}
}  // namespace

SpmTokenizer::SpmTokenizer(SpmSpec spec)
    : source_(std::move(spec.source)),
      tokens_(std::move(spec.tokens)),
      scores_(std::move(spec.scores)),
      types_(std::move(spec.types)),
      unk_(spec.unk),
      add_space_prefix_(spec.add_space_prefix) {
  const size_t n = tokens_.size();
  check(n > 0, "{}: empty vocabulary", source_);
  if (scores_.empty()) scores_.assign(n, 0.f);
  if (types_.empty()) types_.assign(n, kNormal);
  check(scores_.size() == n && types_.size() == n,
        "{}: tokenizer.ggml.scores/token_type have {}/{} entries, expected {} (one per token)",
        source_, scores_.size(), types_.size(), n);
  std::fill(std::begin(byte_id_), std::end(byte_id_), -1);
  std::vector<AddedToken> specials;
  for (size_t id = 0; id < n; ++id) {
    id_of_.emplace(tokens_[id], static_cast<int32_t>(id));
    if (types_[id] == kByte) {
      int b = parse_byte_token(tokens_[id]);
      check(b >= 0, "{}: byte token #{} \"{}\" is not of the form <0xNN>", source_, id, excerpt(tokens_[id]));
      byte_id_[b] = static_cast<int32_t>(id);
    }
    if (types_[id] == kControl || types_[id] == kUserDefined || types_[id] == kUnknown)
      specials.push_back({tokens_[id], static_cast<int32_t>(id), false, false, types_[id] != kUserDefined});
  }
  for (int b = 0; b < 256; ++b) {  // no <0xNN> token: use the single-byte token, else <unk>
    if (byte_id_[b] >= 0) continue;
    auto it = id_of_.find(std::string(1, static_cast<char>(b)));
    byte_id_[b] = it != id_of_.end() ? it->second : unk_;
  }
  specials_ = AddedTokenMatcher(specials);
  bos_id_ = spec.bos;
  eos_id_ = spec.eos;
  add_bos_ = spec.add_bos && spec.bos >= 0;
  eog_ids_ = spec.eog;
  chat_template_ = spec.chat_template;
  strip_leading_space_ = add_space_prefix_;
}

int32_t SpmTokenizer::find(std::string_view s) const {
  auto it = id_of_.find(s);
  return it == id_of_.end() ? -1 : it->second;
}

std::string SpmTokenizer::token_bytes(int32_t id) const {
  check(id >= 0 && static_cast<size_t>(id) < tokens_.size(), "{}: token id {} out of range [0, {})",
        source_, id, tokens_.size());
  const std::string& t = tokens_[id];
  if (types_[id] == kByte) return std::string(1, static_cast<char>(parse_byte_token(t)));
  if (types_[id] == kControl || types_[id] == kUnknown) return t;
  std::string out;
  size_t i = 0, k;
  while ((k = t.find(kSpace, i)) != std::string::npos) {
    out.append(t, i, k - i);
    out += ' ';
    i = k + kSpace.size();
  }
  out.append(t, i);
  return out;
}

void SpmTokenizer::encode_fragment(const std::string& text, std::vector<int32_t>& out) const {
  struct Sym {
    int prev, next;
    size_t off, n;  // bytes of text
  };
  std::vector<Sym> sym;
  sym.reserve(text.size());
  for (size_t off = 0; off < text.size();) {
    size_t len = std::min<size_t>(utf8_len(static_cast<uint8_t>(text[off])), text.size() - off);
    int idx = static_cast<int>(sym.size());
    sym.push_back({idx - 1, off + len == text.size() ? -1 : idx + 1, off, len});
    off += len;
  }
  struct Bigram {
    float score;
    int left, right;
    size_t size;
  };
  // Highest score first; on ties the leftmost pair (llama.cpp's llm_bigram_spm::comparator).
  auto worse = [](const Bigram& a, const Bigram& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(worse)> queue(worse);
  auto try_add = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    std::string_view s(text.data() + sym[l].off, sym[l].n + sym[r].n);
    int32_t id = find(s);
    if (id < 0) return;
    queue.push({scores_[id], l, r, s.size()});
  };
  for (size_t i = 1; i < sym.size(); ++i) try_add(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!queue.empty()) {
    Bigram b = queue.top();
    queue.pop();
    Sym &l = sym[b.left], &r = sym[b.right];
    if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // one side already merged
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  for (int i = sym.empty() ? -1 : 0; i >= 0; i = sym[i].next) {
    std::string_view s(text.data() + sym[i].off, sym[i].n);
    int32_t id = find(s);
    if (id >= 0) {
      out.push_back(id);
    } else {  // merges only ever produce tokens, so this is a single character: emit its bytes
      for (char c : s) out.push_back(byte_id_[static_cast<uint8_t>(c)]);
    }
  }
}

std::vector<int32_t> SpmTokenizer::encode(std::string_view raw, bool add_bos) const {
  std::string clean;
  if (!utf8::is_valid(raw)) {
    clean = utf8::sanitize(raw);
    raw = clean;
  }
  std::vector<int32_t> out;
  if (add_bos && add_bos_) out.push_back(bos_id_);
  bool prev_special = true;  // the start counts as "after a special token"
  for (const auto& seg : specials_.split(raw)) {
    if (seg.id >= 0) {
      out.push_back(seg.id);
      prev_special = true;
      continue;
    }
    std::string text;
    text.reserve(seg.text.size() + 16);
    if (add_space_prefix_ && prev_special) text += kSpace;
    for (char c : seg.text) {
      if (c == ' ') text += kSpace;
      else text += c;
    }
    encode_fragment(text, out);
    prev_special = false;
  }
  return out;
}

}  // namespace bosch
