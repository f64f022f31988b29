#include "tasks/longbench_metrics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "tasks/longbench_text.h"
#include "util/error.h"
#include "util/utf8.h"

namespace bosch::longbench {

namespace {

constexpr std::string_view kAsciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";  // string.punctuation
// metrics.py normalize_zh_answer's cn_punctuation, verbatim (note: it has 》 but not 《).
constexpr std::string_view kCnPunct =
    "！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〾〿–—‘’‛“”„‟…‧﹏.";

bool is_ascii_punct(char32_t c) { return c < 0x80 && kAsciiPunct.find(char(c)) != std::string_view::npos; }

const std::unordered_set<char32_t>& zh_punct_set() {
  static const std::unordered_set<char32_t> set = [] {
    std::unordered_set<char32_t> s;
    for (char32_t c : utf8::decode(kCnPunct)) s.insert(c);
    for (char c : kAsciiPunct) s.insert(char32_t(c));
    return s;
  }();
  return set;
}

bool is_ascii_alnum(char32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_ascii_digit(char32_t c) { return c >= '0' && c <= '9'; }

// Counts how many numbers (\d+) in pred equal `target` (string equality, as the official code).
double fraction_equal_numbers(std::string_view pred, const std::string& target) {
  std::vector<std::string> numbers = regex_findall(R"(\d+)", pred);
  if (numbers.empty()) return 0.0;
  size_t right = 0;
  for (const auto& n : numbers) right += (n == target);
  return double(right) / double(numbers.size());
}

double paragraph_retrieval(std::string_view pred, std::string_view gold, const std::string& pattern) {
  std::vector<std::string> ids = regex_findall(pattern, gold);
  check(!ids.empty(), "longbench: answer '{}' has no paragraph id matching '{}'", gold, pattern);
  return fraction_equal_numbers(pred, ids[0]);
}

// rouge's sentence preparation: [" ".join(s.split()) for s in text.split(".") if len(s) > 0]
std::vector<std::string> rouge_sentences(std::string_view text) {
  std::vector<std::string> out;
  for (const auto& s : py_split(text, "."))
    if (!s.empty()) out.push_back(join(py_split_ws(s), " "));
  return out;
}

// The words of a rouge sentence: s.split(" ") ("" gives one empty word, as in Python).
std::vector<int> sentence_word_ids(const std::string& s, std::unordered_map<std::string, int>& vocab) {
  std::vector<int> ids;
  for (const auto& w : py_split(s, " ")) ids.push_back(vocab.emplace(w, int(vocab.size())).first->second);
  return ids;
}

// rouge_score._recon_lcs(x, y): the words of one LCS, chosen by the package's back-trace.
void recon_lcs_words(const std::vector<int>& x, const std::vector<int>& y, std::unordered_set<int>& into) {
  const size_t n = x.size(), m = y.size();
  std::vector<int> t((n + 1) * (m + 1), 0);
  auto T = [&](size_t i, size_t j) -> int& { return t[i * (m + 1) + j]; };
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j)
      T(i, j) = x[i - 1] == y[j - 1] ? T(i - 1, j - 1) + 1 : std::max(T(i - 1, j), T(i, j - 1));
  size_t i = n, j = m;
  while (i > 0 && j > 0) {
    if (x[i - 1] == y[j - 1]) {
      into.insert(x[i - 1]);
      --i, --j;
    } else if (T(i - 1, j) > T(i, j - 1)) {
      --i;
    } else {
      --j;
    }
  }
}

}  // namespace

std::string normalize_answer(std::string_view s) {
  std::u32string kept;
  for (char32_t c : utf8::decode(py_lower(s)))
    if (!is_ascii_punct(c)) kept += c;
  std::string no_articles = regex_sub(R"(\b(a|an|the)\b)", " ", utf8::encode(kept));
  return join(py_split_ws(no_articles), " ");
}

std::string normalize_zh_answer(std::string_view s) {
  const auto& punct = zh_punct_set();
  std::u32string kept;
  for (char32_t c : utf8::decode(py_lower(s)))
    if (!punct.count(c) && !py_isspace(c)) kept += c;
  return utf8::encode(kept);
}

std::vector<std::string> segment_zh(std::string_view s) {
  std::u32string t = utf8::decode(s);
  std::vector<std::string> out;
  size_t i = 0;
  while (i < t.size()) {
    size_t j = i + 1;
    if (is_ascii_alnum(t[i])) {
      // jieba's finalseg re_skip: [a-zA-Z0-9]+(?:\.\d+)?%?
      while (j < t.size() && is_ascii_alnum(t[j])) ++j;
      if (j + 1 < t.size() && t[j] == '.' && is_ascii_digit(t[j + 1])) {
        j += 1;
        while (j < t.size() && is_ascii_digit(t[j])) ++j;
      }
      if (j < t.size() && t[j] == '%') ++j;
    }
    out.push_back(utf8::encode(t.substr(i, j - i)));
    i = j;
  }
  return out;
}

double token_f1(const std::vector<std::string>& pred, const std::vector<std::string>& gold) {
  std::map<std::string, int> cp, cg;
  for (const auto& w : pred) ++cp[w];
  for (const auto& w : gold) ++cg[w];
  int same = 0;
  for (const auto& [w, n] : cp) {
    auto it = cg.find(w);
    if (it != cg.end()) same += std::min(n, it->second);
  }
  if (same == 0) return 0.0;
  double precision = 1.0 * same / double(pred.size());
  double recall = 1.0 * same / double(gold.size());
  return (2 * precision * recall) / (precision + recall);
}

double qa_f1_score(std::string_view pred, std::string_view gold) {
  return token_f1(py_split_ws(normalize_answer(pred)), py_split_ws(normalize_answer(gold)));
}

double qa_f1_zh_score(std::string_view pred, std::string_view gold) {
  auto tokens = [](std::string_view s) {
    std::vector<std::string> out;
    for (const auto& t : segment_zh(s)) {
      std::string n = normalize_zh_answer(t);
      if (!n.empty()) out.push_back(std::move(n));
    }
    return out;
  };
  return token_f1(tokens(pred), tokens(gold));
}

double rouge_l_score(std::string_view pred, std::string_view gold) {
  std::vector<std::string> hyp = rouge_sentences(pred), ref = rouge_sentences(gold);
  if (hyp.empty() || ref.empty()) return 0.0;  // ValueError -> except: return 0.0
  std::unordered_map<std::string, int> vocab;
  std::vector<std::vector<int>> hyp_w, ref_w;
  std::unordered_set<int> hyp_set, ref_set;
  for (const auto& s : hyp) {
    hyp_w.push_back(sentence_word_ids(s, vocab));
    hyp_set.insert(hyp_w.back().begin(), hyp_w.back().end());
  }
  for (const auto& s : ref) {
    ref_w.push_back(sentence_word_ids(s, vocab));
    ref_set.insert(ref_w.back().begin(), ref_w.back().end());
  }
  // Summary-level ROUGE-L with exclusive=True: the summed "new union counts" telescope to the
  // size of the union of all LCS word sets; m and n count distinct words.
  std::unordered_set<int> lcs_union;
  for (const auto& r : ref_w)
    for (const auto& h : hyp_w) recon_lcs_words(r, h, lcs_union);
  double llcs = double(lcs_union.size());
  double r_lcs = llcs / double(ref_set.size());
  double p_lcs = llcs / double(hyp_set.size());
  return 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8));
}

double rouge_zh_score(std::string_view pred, std::string_view gold) {
  return rouge_l_score(join(segment_zh(pred), " "), join(segment_zh(gold), " "));
}

double classification_score(std::string_view pred, std::string_view gold,
                            const std::vector<std::string>& all_classes) {
  std::vector<std::string> em;
  for (const auto& c : all_classes)
    if (pred.find(c) != std::string_view::npos) em.push_back(c);
  // `for match_term in em: ... em.remove(match_term)`: Python's list iterator advances its
  // index after a removal, so the element that slid into the current slot is skipped.
  for (size_t i = 0; i < em.size(); ++i) {
    const std::string term = em[i];
    if (gold.find(term) != std::string_view::npos && term != gold)
      em.erase(std::find(em.begin(), em.end(), term));
  }
  // `if em_match_list != 0` is always true (a list is never 0): the difflib branch is dead.
  if (std::find(em.begin(), em.end(), gold) != em.end()) return 1.0 / double(em.size());
  return 0.0;
}

double retrieval_score(std::string_view pred, std::string_view gold) {
  return paragraph_retrieval(pred, gold, R"(Paragraph (\d+))");
}

double retrieval_zh_score(std::string_view pred, std::string_view gold) {
  return paragraph_retrieval(pred, gold, R"(段落(\d+))");
}

double count_score(std::string_view pred, std::string_view gold) {
  return fraction_equal_numbers(pred, std::string(gold));
}

double difflib_ratio(std::string_view a_utf8, std::string_view b_utf8) {
  const std::u32string a = utf8::decode(a_utf8), b = utf8::decode(b_utf8);
  const int la = int(a.size()), lb = int(b.size());
  if (la + lb == 0) return 1.0;
  // __chain_b: positions of each element of b; with autojunk, elements occurring more than
  // 1% (+1) in a b of 200+ items are "popular" and dropped from b2j (but are not junk).
  std::unordered_map<char32_t, std::vector<int>> b2j;
  for (int j = 0; j < lb; ++j) b2j[b[j]].push_back(j);
  if (lb >= 200) {
    const size_t ntest = size_t(lb / 100 + 1);
    for (auto it = b2j.begin(); it != b2j.end();)
      it = it->second.size() > ntest ? b2j.erase(it) : std::next(it);
  }
  struct M { int i, j, k; };
  auto longest = [&](int alo, int ahi, int blo, int bhi) {
    int besti = alo, bestj = blo, bestsize = 0;
    std::unordered_map<int, int> j2len, next;
    for (int i = alo; i < ahi; ++i) {
      next.clear();
      auto it = b2j.find(a[i]);
      if (it != b2j.end()) {
        for (int j : it->second) {
          if (j < blo) continue;
          if (j >= bhi) break;
          auto prev = j2len.find(j - 1);
          int k = (prev == j2len.end() ? 0 : prev->second) + 1;
          next[j] = k;
          if (k > bestsize) besti = i - k + 1, bestj = j - k + 1, bestsize = k;
        }
      }
      std::swap(j2len, next);
    }
    // No junk (isjunk is None), so only the non-junk extensions can apply; they extend over
    // popular elements too.
    while (besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1]) --besti, --bestj, ++bestsize;
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] == b[bestj + bestsize])
      ++bestsize;
    return M{besti, bestj, bestsize};
  };
  // get_matching_blocks: the total matched size does not depend on the queue order.
  long matches = 0;
  std::vector<std::array<int, 4>> queue{{0, la, 0, lb}};
  while (!queue.empty()) {
    auto [alo, ahi, blo, bhi] = queue.back();
    queue.pop_back();
    M x = longest(alo, ahi, blo, bhi);
    if (x.k) {
      matches += x.k;
      if (alo < x.i && blo < x.j) queue.push_back({alo, x.i, blo, x.j});
      if (x.i + x.k < ahi && x.j + x.k < bhi) queue.push_back({x.i + x.k, ahi, x.j + x.k, bhi});
    }
  }
  return 2.0 * double(matches) / double(la + lb);
}

int fuzz_ratio(std::string_view a, std::string_view b) {
  std::string sa = utf8::sanitize(a), sb = utf8::sanitize(b);
  if (sa == sb) return 100;                  // check_for_equivalence (before the empty check)
  if (sa.empty() || sb.empty()) return 0;    // check_empty_string
  return int(std::nearbyint(100 * difflib_ratio(sa, sb)));  // utils.intr: round half to even
}

double code_sim_score(std::string_view pred, std::string_view gold) {
  size_t b = pred.find_first_not_of('\n');
  std::string_view rest = b == std::string_view::npos ? std::string_view() : pred.substr(b);
  std::string line;
  for (const auto& l : py_split(rest, "\n")) {
    if (l.find('`') == std::string::npos && l.find('#') == std::string::npos &&
        l.find("//") == std::string::npos) {
      line = l;
      break;
    }
  }
  return fuzz_ratio(line, gold) / 100.0;
}

const char* metric_name(Metric m) {
  switch (m) {
    case Metric::QaF1: return "qa_f1";
    case Metric::QaF1Zh: return "qa_f1_zh";
    case Metric::Rouge: return "rouge_l";
    case Metric::RougeZh: return "rouge_l_zh";
    case Metric::Classification: return "classification";
    case Metric::Retrieval: return "retrieval";
    case Metric::RetrievalZh: return "retrieval_zh";
    case Metric::Count: return "count";
    case Metric::CodeSim: return "code_sim";
  }
  return "?";
}

double metric_score(Metric m, std::string_view pred, std::string_view gold,
                    const std::vector<std::string>& all_classes) {
  switch (m) {
    case Metric::QaF1: return qa_f1_score(pred, gold);
    case Metric::QaF1Zh: return qa_f1_zh_score(pred, gold);
    case Metric::Rouge: return rouge_l_score(pred, gold);
    case Metric::RougeZh: return rouge_zh_score(pred, gold);
    case Metric::Classification: return classification_score(pred, gold, all_classes);
    case Metric::Retrieval: return retrieval_score(pred, gold);
    case Metric::RetrievalZh: return retrieval_zh_score(pred, gold);
    case Metric::Count: return count_score(pred, gold);
    case Metric::CodeSim: return code_sim_score(pred, gold);
  }
  return 0.0;
}

double score_sample(Metric m, bool first_line_rule, std::string_view pred,
                    const std::vector<std::string>& answers,
                    const std::vector<std::string>& all_classes) {
  std::string p = first_line_rule ? first_line(pred) : std::string(pred);
  double score = 0.0;
  for (const auto& gold : answers) score = std::max(score, metric_score(m, p, gold, all_classes));
  return score;
}

}  // namespace bosch::longbench
