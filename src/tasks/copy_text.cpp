#include "tasks/copy_text.h"

#include <string>
#include <vector>

#include "util/error.h"

namespace bosch {

namespace {

std::string draw_string(Split split, TaskRng& rng, int min_chars, int max_chars) {
  static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (;;) {
    int n = min_chars + static_cast<int>(rng.below(max_chars - min_chars + 1));
    std::string s;
    for (int i = 0; i < n; ++i) s += kAlphabet[rng.below(sizeof(kAlphabet) - 1)];
    if (split_of(s) == split) return s;
  }
}

}  // namespace

TrainText make_copy_text(const Tokenizer& tok, int length, Split split, uint64_t seed,
                         const Haystack& haystack, const CopyOptions& opt) {
  check(length >= 16, "copy: length must be at least 16 tokens, got {}", length);
  check(opt.min_chars >= 2 && opt.min_chars <= opt.max_chars,
        "copy: need 2 <= min_chars ({}) <= max_chars ({})", opt.min_chars, opt.max_chars);
  TaskRng rng(hash_combine(seed, 0xc0b1));
  Haystack::Stream stream = haystack.stream(TaskRng(hash_combine(seed, 0x4a59)));
  std::vector<std::string> shown;  // strings introduced so far (any may come back)
  TrainText t;
  // Pieces are added while the tokenized text fits; the first piece that does not ends it.
  // Token counts of the pieces (with their leading space) are summed, and the whole text is
  // tokenized only near the limit, where merges across pieces could matter.
  size_t estimate = tok.adds_bos() ? 1 : 0;
  for (;;) {
    std::string text = t.text;
    std::pair<size_t, size_t> span{0, 0};
    std::string fresh;  // a new string, remembered only once it is in the text
    if (!text.empty()) text += ' ';
    double u = rng.uniform01();
    if (u < opt.filler_share) {
      text += stream.next();
    } else if (!shown.empty() && rng.uniform01() < opt.repeat_share) {
      const std::string& s = shown[rng.below(shown.size())];
      span = {text.size() + 1, text.size() + s.size()};  // the first character is not predictable
      text += s;
    } else {
      fresh = draw_string(split, rng, opt.min_chars, opt.max_chars);
      text += fresh;
    }
    size_t piece = tok.encode(text.substr(t.text.size()), false).size();
    size_t n = estimate + piece + 8 < static_cast<size_t>(length) ? estimate + piece
                                                                   : tok.encode(text, tok.adds_bos()).size();
    if (n > static_cast<size_t>(length)) {
      if (t.text.empty()) continue;  // a first piece longer than the whole text: draw again
      break;
    }
    estimate = n;
    t.text = std::move(text);
    if (span.second > span.first) t.answer_spans.push_back(span);
    if (!fresh.empty()) shown.push_back(std::move(fresh));
  }
  check(!t.text.empty(), "copy: length {} cannot hold one piece of text", length);
  t.n_tokens = tok.encode(t.text, tok.adds_bos()).size();
  return t;
}

}  // namespace bosch
