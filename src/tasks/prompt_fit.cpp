#include "tasks/prompt_fit.h"

#include "util/error.h"

namespace bosch {

ChatWrap chat_wrap_for(const Tokenizer& tok, bool use_template) {
  ChatWrap w;
  if (!use_template || !tok.has_chat_template()) return w;
  const std::string marker = "\x01BOSCH_USER_MESSAGE\x01";
  std::string t = tok.apply_chat_template(marker);
  size_t at = t.find(marker);
  check(at != std::string::npos, "chat template: the rendered template dropped the user message");
  w.enabled = true;
  w.prefix = t.substr(0, at);
  w.suffix = t.substr(at + marker.size());
  return w;
}

int largest_fitting(int estimate, const std::function<bool(int)>& fits) {
  if (!fits(0)) return -1;
  int lo = 0, hi = -1;  // fits(lo) true; fits(hi) false when hi >= 0
  int k = std::max(estimate, 0);
  if (k > 0) {
    if (fits(k)) lo = k;
    else hi = k;
  }
  for (int step = 1; hi < 0; step *= 2) {  // gallop upwards
    if (fits(lo + step)) lo += step;
    else hi = lo + step;
  }
  if (lo == 0 && hi > 1) {  // estimate too high: gallop downwards from it
    for (int step = 1; hi - step > 0; step *= 2) {
      if (fits(hi - step)) { lo = hi - step; break; }
      hi -= step;
    }
  }
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

void tokenize_sample(const Tokenizer& tok, const std::string& prompt,
                     const std::string& continuation,
                     const std::vector<std::pair<size_t, size_t>>& answer_ranges, TaskSample& out) {
  const std::string full = prompt + continuation;
  const size_t P = prompt.size();
  std::vector<int32_t> ids = tok.encode(full, tok.adds_bos());
  // Walk back from the end: the continuation holds no special tokens and no tokenizer-added
  // space (those come only after the start or a special token), so its tokens spell it byte
  // for byte. start[i] = byte offset of token i in `full`.
  std::vector<size_t> start(ids.size(), 0);
  size_t pos = full.size(), n_prompt = ids.size();
  bool spelled = true;
  while (n_prompt > 0 && pos > P) {
    std::string b = tok.token_bytes(ids[n_prompt - 1]);
    if (b.empty() || b.size() > pos || full.compare(pos - b.size(), b.size(), b) != 0) {
      spelled = false;
      break;
    }
    pos -= b.size();
    start[--n_prompt] = pos;  // a token straddling the border joins the continuation
  }
  size_t cut = pos;
  if (!spelled) {
    // Cut at the prompt's own tokenization; each answer is judged on the whole continuation.
    auto p = tok.encode(prompt, tok.adds_bos());
    check(p.size() <= ids.size() && std::equal(p.begin(), p.end(), ids.begin()),
          "task generator: the tokenizer splits the prompt differently when the answer follows");
    n_prompt = p.size();
    cut = P;
  }
  out.prompt = full.substr(0, cut);
  out.continuation = full.substr(cut);
  out.prompt_ids.assign(ids.begin(), ids.begin() + n_prompt);
  out.continuation_ids.assign(ids.begin() + n_prompt, ids.end());
  out.answers.clear();
  for (auto [b, e] : answer_ranges) {
    TaskAnswer a;
    a.text = continuation.substr(b, e - b);
    size_t tb = n_prompt, te = ids.size();
    if (spelled) {
      // Tokens overlapping [lo, hi): the answer and the one space before it.
      size_t lo = P + (b > 0 && continuation[b - 1] == ' ' ? b - 1 : b), hi = P + e;
      auto token_end = [&](size_t i) { return i + 1 < ids.size() ? start[i + 1] : full.size(); };
      while (tb < ids.size() && token_end(tb) <= lo) ++tb;
      te = tb;
      while (te < ids.size() && start[te] < hi) ++te;
    }
    a.begin = static_cast<int>(tb - n_prompt);
    a.ids.assign(ids.begin() + tb, ids.begin() + te);
    out.answers.push_back(std::move(a));
  }
}

}  // namespace bosch
