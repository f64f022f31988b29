// The official LongBench (v1) metrics (THUDM/LongBench metrics.py + eval.py), reproduced
// quirks included. Every function returns a score in [0, 1] for one (prediction, answer) pair;
// score_sample applies the per-dataset metric, the first-line rule and the max over answers.
//
// Deviations from the official scorer (all documented at the function):
//  * Chinese word segmentation: the official code uses jieba; here Chinese text is segmented
//    into single characters, with runs of ASCII letters/digits kept as one token (as jieba
//    keeps them). Affects qa_f1_zh (multifieldqa_zh) and rouge_zh (dureader, vcsum) only.
//  * rouge: the `rouge` package's recursive LCS back-trace raises RecursionError on very long
//    single "sentences" (> ~1000 words in hypothesis + reference), which the official scorer
//    turns into a score of 0; here the LCS is computed iteratively and scores normally.
//  * str.lower() is exact for Latin, Greek, Cyrillic and fullwidth Latin only.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace bosch::longbench {

// normalize_answer: lower, drop ASCII punctuation, drop articles (a|an|the as whole words),
// collapse whitespace to single spaces.
std::string normalize_answer(std::string_view s);
// normalize_zh_answer: lower, drop ASCII + the official list of CJK punctuation, drop all
// whitespace.
std::string normalize_zh_answer(std::string_view s);
// Stand-in for jieba.cut (see deviations): runs of ASCII letters/digits are one token (with
// jieba's optional ".digits" and "%"), every other character (CJK, punctuation, whitespace)
// is one token.
std::vector<std::string> segment_zh(std::string_view s);

// f1_score over token multisets: 0 when nothing is shared.
double token_f1(const std::vector<std::string>& pred, const std::vector<std::string>& gold);
double qa_f1_score(std::string_view pred, std::string_view gold);
double qa_f1_zh_score(std::string_view pred, std::string_view gold);

// rouge (pltrdy `rouge` 1.0.1) get_scores(...)["rouge-l"]["f"]: sentences split on '.',
// summary-level union LCS over sets of words (exclusive=True); 0 when either side has no
// sentence (the official try/except).
double rouge_l_score(std::string_view pred, std::string_view gold);
// rouge_zh_score: segment both sides (segment_zh), join with spaces, rouge_l_score.
double rouge_zh_score(std::string_view pred, std::string_view gold);

// classification_score with the official list-mutation quirk (removing while iterating skips
// the element after each removal) and its dead difflib branch (never taken).
double classification_score(std::string_view pred, std::string_view gold,
                            const std::vector<std::string>& all_classes);
// Fraction of the numbers (\d+) in pred equal to the paragraph id in gold
// ("Paragraph N" for en, "段落N" for zh). Throws Error when gold has no id.
double retrieval_score(std::string_view pred, std::string_view gold);
double retrieval_zh_score(std::string_view pred, std::string_view gold);
// Fraction of the numbers (\d+) in pred equal to gold.
double count_score(std::string_view pred, std::string_view gold);

// difflib.SequenceMatcher(None, a, b).ratio() on code points (autojunk on, as default).
double difflib_ratio(std::string_view a, std::string_view b);
// fuzzywuzzy fuzz.ratio: 100 if equal, 0 if either empty, else round-half-even of
// 100 * difflib_ratio. The pure-Python SequenceMatcher is used because LongBench's
// requirements install fuzzywuzzy without python-Levenshtein.
int fuzz_ratio(std::string_view a, std::string_view b);
// code_sim_score: first line (after lstrip('\n')) containing none of ` # // , then
// fuzz_ratio / 100.
double code_sim_score(std::string_view pred, std::string_view gold);

enum class Metric { QaF1, QaF1Zh, Rouge, RougeZh, Classification, Retrieval, RetrievalZh, Count, CodeSim };
const char* metric_name(Metric m);
double metric_score(Metric m, std::string_view pred, std::string_view gold,
                    const std::vector<std::string>& all_classes);

// One sample as eval.py scores it: first-line rule when `first_line_rule`, then the max of the
// metric over the answers (0 with no answers).
double score_sample(Metric m, bool first_line_rule, std::string_view pred,
                    const std::vector<std::string>& answers,
                    const std::vector<std::string>& all_classes);

}  // namespace bosch::longbench
