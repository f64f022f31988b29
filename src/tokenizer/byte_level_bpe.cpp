#include "tokenizer/byte_level_bpe.h"

#include <algorithm>

#include "util/utf8.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch {
namespace {

struct ByteMap {
  char32_t to_cp[256];
  int16_t to_byte[324];  // code points 0..323 -> byte, -1 when unmapped
  ByteMap() {
    std::fill(std::begin(to_byte), std::end(to_byte), int16_t{-1});
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      to_cp[b] = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
      to_byte[to_cp[b]] = static_cast<int16_t>(b);
    }
  }
};
const ByteMap& byte_map() {
  static const ByteMap m;
  return m;
}

constexpr size_t kMaxCachedPiece = 256;
constexpr size_t kMaxCacheEntries = 1 << 18;

}  // namespace

char32_t byte_to_unicode(uint8_t b) { return byte_map().to_cp[b]; }

std::string byte_level_to_bytes(std::string_view mapped) {
  const ByteMap& m = byte_map();
  std::string out;
  size_t i = 0;
  while (i < mapped.size()) {
    size_t start = i;
    char32_t cp = utf8::next(mapped, i);
    if (cp < 324 && m.to_byte[cp] >= 0) out += static_cast<char>(m.to_byte[cp]);
    else out.append(mapped.substr(start, i - start));
  }
  return out;
}

ByteLevelBpeTokenizer::ByteLevelBpeTokenizer(ByteLevelBpeSpec spec)
    : source_(spec.source),
      added_(spec.added),
      normalizer_(std::move(spec.normalizer)),
      add_prefix_space_(spec.add_prefix_space),
      ignore_merges_(spec.ignore_merges) {
  // Ids size the tables: each must be below the number of tokens declared (vocab + added),
  // checked before any allocation (a huge or negative id is a clear error, not 8 GB).
  const size_t declared = spec.vocab.size() + spec.added.size();
  size_t n = spec.vocab.size();
  for (const auto& a : spec.added) {
    check(a.id >= 0 && static_cast<size_t>(a.id) < declared,
          "{}: added token \"{}\" has id {}, expected an id in [0, {}) (the vocabulary plus the "
          "added tokens)", source_, excerpt(a.content), a.id, declared);
    n = std::max(n, static_cast<size_t>(a.id) + 1);
  }
  bytes_.resize(n);
  id_of_bytes_.reserve(spec.vocab.size());
  for (size_t id = 0; id < spec.vocab.size(); ++id) {
    if (spec.vocab[id].empty()) continue;  // hole in the id range
    bytes_[id] = byte_level_to_bytes(spec.vocab[id]);
    id_of_bytes_.emplace(bytes_[id], static_cast<int32_t>(id));
  }
  for (const auto& a : spec.added) {
    bytes_[a.id] = a.content;
  }
  for (int b = 0; b < 256; ++b) {
    auto it = id_of_bytes_.find(std::string(1, static_cast<char>(b)));
    byte_id_[b] = it == id_of_bytes_.end() ? -1 : it->second;
  }
  merges_.reserve(spec.merges.size());
  for (size_t r = 0; r < spec.merges.size(); ++r) {
    const auto& [a, b] = spec.merges[r];
    std::string ra = byte_level_to_bytes(a), rb = byte_level_to_bytes(b);
    auto ia = id_of_bytes_.find(ra), ib = id_of_bytes_.find(rb), im = id_of_bytes_.find(ra + rb);
    check(ia != id_of_bytes_.end() && ib != id_of_bytes_.end() && im != id_of_bytes_.end(),
          "{}: merge #{} \"{} {}\" uses a token missing from the vocabulary", source_, r, excerpt(a), excerpt(b));
    merges_.insert(ia->second, ib->second, static_cast<int32_t>(r), im->second);
  }
  for (size_t i = 0; i < spec.splits.size(); ++i)
    splitters_.push_back(std::make_unique<RegexSplitter>(spec.splits[i].pattern, spec.splits[i].behavior,
                                                         fmt::format("{} (split step {})", source_, i)));
  bos_id_ = spec.bos;
  eos_id_ = spec.eos;
  add_bos_ = spec.add_bos && spec.bos >= 0;
  eog_ids_ = spec.eog;
  chat_template_ = spec.chat_template;
}

std::string ByteLevelBpeTokenizer::token_bytes(int32_t id) const {
  check(id >= 0 && static_cast<size_t>(id) < bytes_.size(), "{}: token id {} out of range [0, {})",
        source_, id, bytes_.size());
  return bytes_[id];
}

void ByteLevelBpeTokenizer::encode_piece_uncached(std::string_view piece, std::vector<int32_t>& out) const {
  std::vector<int32_t> ids(piece.size());
  for (size_t i = 0; i < piece.size(); ++i) ids[i] = byte_id_[static_cast<uint8_t>(piece[i])];
  bpe_merge(merges_, ids);
  for (int32_t id : ids)
    if (id >= 0) out.push_back(id);  // bytes missing from the vocabulary are dropped (as HF does without unk)
}

void ByteLevelBpeTokenizer::encode_piece(std::string_view piece, std::vector<int32_t>& out) const {
  if (piece.size() == 1) {
    if (int32_t id = byte_id_[static_cast<uint8_t>(piece[0])]; id >= 0) out.push_back(id);
    return;
  }
  if (ignore_merges_) {
    if (auto it = id_of_bytes_.find(piece); it != id_of_bytes_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  const bool cacheable = piece.size() <= kMaxCachedPiece;
  if (cacheable) {
    std::lock_guard lk(cache_mu_);
    if (auto it = cache_.find(piece); it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  size_t before = out.size();
  encode_piece_uncached(piece, out);
  if (cacheable) {
    std::lock_guard lk(cache_mu_);
    if (cache_.size() >= kMaxCacheEntries) cache_.clear();
    cache_.emplace(std::string(piece), std::vector<int32_t>(out.begin() + static_cast<long>(before), out.end()));
  }
}

void ByteLevelBpeTokenizer::encode_section(std::string_view text, std::vector<int32_t>& out) const {
  std::string norm;
  if (!normalizer_.identity()) {
    norm = normalizer_.apply(std::string(text));
    text = norm;
  }
  if (add_prefix_space_ && !text.empty() && text[0] != ' ') {
    std::string prefixed;
    prefixed.reserve(text.size() + 1);
    prefixed += ' ';
    prefixed.append(text);
    norm = std::move(prefixed);
    text = norm;
  }
  if (text.empty()) return;
  // Apply the split steps in order; the last one feeds the BPE. One time bound for the text.
  const auto deadline = split_deadline(text.size());
  std::function<void(std::string_view, size_t)> step = [&](std::string_view s, size_t k) {
    if (k == splitters_.size()) return encode_piece(s, out);
    splitters_[k]->split(s, [&](std::string_view piece) { step(piece, k + 1); }, deadline);
  };
  step(text, 0);
}

std::vector<int32_t> ByteLevelBpeTokenizer::encode(std::string_view text, bool add_bos) const {
  std::string clean;
  if (!utf8::is_valid(text)) {  // invalid bytes -> U+FFFD, as the JavaScript reference sees them
    clean = utf8::sanitize(text);
    text = clean;
  }
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  if (add_bos && add_bos_) out.push_back(bos_id_);
  for (const auto& seg : added_.split(text)) {
    if (seg.id >= 0) out.push_back(seg.id);
    else encode_section(seg.text, out);
  }
  return out;
}

}  // namespace bosch
