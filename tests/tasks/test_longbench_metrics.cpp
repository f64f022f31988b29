// LongBench metrics against hand-computed values (each derivation in the comment). The values
// were also cross-checked against the official Python code (metrics.py, rouge 1.0.1 rouge-l,
// difflib) on the same inputs.
#include <gtest/gtest.h>

#include "tasks/longbench_metrics.h"
#include "tasks/longbench_text.h"
#include "util/utf8.h"
#include "util/error.h"

using namespace bosch::longbench;

TEST(LongBenchText, FirstLineRule) {
  // prediction.lstrip('\n').split('\n')[0]
  EXPECT_EQ(first_line("\n\nParis\nQuestion: x"), "Paris");
  EXPECT_EQ(first_line("Paris"), "Paris");
  EXPECT_EQ(first_line("\n"), "");
  EXPECT_EQ(first_line(""), "");
  EXPECT_EQ(first_line(" \nx"), " ");  // only '\n' is stripped, not spaces
}

TEST(LongBenchText, PythonLowerSplitAndRegex) {
  EXPECT_EQ(py_lower("ÀÉÎ ĀŸ ΣΑ ДА ＡＢ Ab"), "àéî āÿ σα да ａｂ ab");
  EXPECT_EQ(py_lower("İ"), "i\xCC\x87");  // Python: 'İ'.lower() == 'i̇' (2 code points)
  // str.split() splits on Unicode whitespace (ideographic space, NBSP), drops empties.
  auto parts = py_split_ws("  a\u3000b\u00A0c\n ");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2], "c");
  // s.split(".") keeps empty pieces.
  EXPECT_EQ(py_split("a..b", ".").size(), 3u);
  // Python's \d matches fullwidth digits too.
  auto nums = regex_findall(R"(\d+)", "Paragraph ３ and 45");
  ASSERT_EQ(nums.size(), 2u);
  EXPECT_EQ(nums[0], "３");
  EXPECT_EQ(nums[1], "45");
  // Invalid UTF-8 becomes U+FFFD instead of failing.
  EXPECT_EQ(bosch::utf8::sanitize("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  // A truncated sequence is one U+FFFD, as in Python (b"\xe2\x82A".decode(errors="replace")).
  EXPECT_EQ(py_lower("\xE2\x82" "A"), "\xEF\xBF\xBD" "a");
}

TEST(LongBenchMetrics, NormalizeAnswer) {
  // lower -> drop punctuation -> drop whole-word articles -> collapse spaces
  EXPECT_EQ(normalize_answer("The  Eiffel-Tower, an icon!"), "eiffeltower icon");
  EXPECT_EQ(normalize_answer("Theater of the absurd"), "theater of absurd");
  // Chinese: ASCII + listed CJK punctuation and all whitespace removed. The official list has
  // 》 but not 《, so 《 survives.
  EXPECT_EQ(normalize_zh_answer("《红楼梦》， 作者 ABC。"), "《红楼梦作者abc");
}

TEST(LongBenchMetrics, QaF1English) {
  // Both normalise to "eiffel tower" -> F1 1.
  EXPECT_DOUBLE_EQ(qa_f1_score("The Eiffel Tower!", "eiffel tower"), 1.0);
  // [paris is in france] vs [paris france]: same 2, P = 2/4, R = 2/2, F1 = 2*.5*1/1.5 = 2/3.
  EXPECT_NEAR(qa_f1_score("Paris is in France", "Paris, France"), 2.0 / 3.0, 1e-12);
  // Articles removed: [apple day] vs [apple]: P = 1/2, R = 1, F1 = 2/3.
  EXPECT_NEAR(qa_f1_score("an apple a day", "the apple"), 2.0 / 3.0, 1e-12);
  // "theater" is not an article: [theater] vs [theater] -> 1.
  EXPECT_DOUBLE_EQ(qa_f1_score("theater", "the theater"), 1.0);
  // Multisets: [x y y] vs [y y y z]: common y = min(2,3) = 2, P = 2/3, R = 2/4,
  // F1 = 2*(1/3)/(7/6) = 4/7.
  EXPECT_NEAR(qa_f1_score("x y y", "y y y z"), 4.0 / 7.0, 1e-12);
  EXPECT_DOUBLE_EQ(qa_f1_score("dog", "cat"), 0.0);
  EXPECT_DOUBLE_EQ(qa_f1_score("", "cat"), 0.0);
}

TEST(LongBenchMetrics, QaF1Chinese) {
  // Characters: [北 京] (。 dropped) vs [北 京 市]: P = 1, R = 2/3, F1 = (4/3)/(5/3) = 0.8.
  EXPECT_NEAR(qa_f1_zh_score("北京。", "北京市"), 0.8, 1e-12);
  // ASCII digit runs stay one token (as jieba): [2019 年] vs [2019 年 5 月]: P = 1, R = 1/2,
  // F1 = 2/3.
  EXPECT_NEAR(qa_f1_zh_score("2019年", "2019年5月"), 2.0 / 3.0, 1e-12);
  auto seg = segment_zh("版本3.5%的GPT4");
  std::vector<std::string> expect = {"版", "本", "3.5%", "的", "GPT4"};
  EXPECT_EQ(seg, expect);
}

TEST(LongBenchMetrics, RougeLEnglish) {
  // One sentence each. Distinct ref words {the cat is on mat} = 5, hyp {the cat sat on mat} = 5.
  // LCS "the cat on the mat" -> word set {the cat on mat} = 4. R = P = 4/5,
  // F = 2*(0.64)/(1.6 + 1e-8) = 0.799999995.
  EXPECT_NEAR(rouge_l_score("the cat sat on the mat", "the cat is on the mat"), 0.799999995, 1e-12);
  // Summary level: ref sentences "a c", "b d"; hyp "a b", "c d". Union of LCS words over all
  // pairs = {a c b d} = 4 = m = n -> F = 2/(2 + 1e-8) = 0.999999995.
  EXPECT_NEAR(rouge_l_score("a b. c d", "a c. b d"), 0.999999995, 1e-12);
  // exclusive=True counts distinct words: "a a a" vs "a": n = m = 1, LCS {a} -> 0.999999995.
  EXPECT_NEAR(rouge_l_score("a a a", "a"), 0.999999995, 1e-12);
  // "hello. " -> sentences ["hello", ""] -> words {hello, ""}: n = 2, m = 1, LCS {hello}:
  // R = 1, P = 1/2, F = 1/(1.5 + 1e-8) = 0.66666666222...
  EXPECT_NEAR(rouge_l_score("hello. ", "hello"), 1.0 / (1.5 + 1e-8), 1e-12);
  // "b a" vs "a b": LCS length 1 -> R = P = 1/2 -> F = 0.5/(1 + 1e-8).
  EXPECT_NEAR(rouge_l_score("a b", "b a"), 0.5 / (1 + 1e-8), 1e-12);
  // No sentence on one side: the official try/except gives 0.
  EXPECT_DOUBLE_EQ(rouge_l_score("...", "x"), 0.0);
  EXPECT_DOUBLE_EQ(rouge_l_score("", "x"), 0.0);
}

TEST(LongBenchMetrics, RougeLChinese) {
  // Characters: ref {今 天 气 不 错} = 5, hyp {今 天 气 很 好} = 5, LCS 今天天气 -> {今 天 气} = 3:
  // R = P = 3/5, F = 0.72/(1.2 + 1e-8) = 0.599999995.
  EXPECT_NEAR(rouge_zh_score("今天天气很好", "今天天气不错"), 0.72 / (1.2 + 1e-8), 1e-12);
}

TEST(LongBenchMetrics, Classification) {
  // em = [Human being, Human]; "Human" is inside the gold and differs -> removed; 1/1.
  EXPECT_DOUBLE_EQ(classification_score("Human being", "Human being", {"Human being", "Human", "Location"}), 1.0);
  // The official removal-while-iterating skips the element after a removal:
  // em = [A B C, A, B, C]; i=1 removes A -> [A B C, B, C]; i=2 is C (B skipped), removed ->
  // [A B C, B]; gold in em -> 1/2 (a bug-free loop would give 1).
  EXPECT_DOUBLE_EQ(classification_score("A B C D", "A B C", {"A B C", "A", "B", "C"}), 0.5);
  // Two classes named, gold among them -> 1/2.
  EXPECT_DOUBLE_EQ(classification_score("Human or Location", "Location", {"Human", "Location"}), 0.5);
  EXPECT_DOUBLE_EQ(classification_score("Location", "Human", {"Human", "Location"}), 0.0);
  EXPECT_DOUBLE_EQ(classification_score("nothing", "Human", {"Human", "Location"}), 0.0);
}

TEST(LongBenchMetrics, RetrievalAndCount) {
  EXPECT_DOUBLE_EQ(retrieval_score("Paragraph 3", "Paragraph 3"), 1.0);
  // numbers [3, 13], one equals 13 -> 1/2.
  EXPECT_DOUBLE_EQ(retrieval_score("Paragraph 3 or Paragraph 13", "Paragraph 13"), 0.5);
  EXPECT_DOUBLE_EQ(retrieval_score("none", "Paragraph 13"), 0.0);
  // A fullwidth ３ is a number (Python \d) but not equal to "3" -> 0.
  EXPECT_DOUBLE_EQ(retrieval_score("Paragraph ３", "Paragraph 3"), 0.0);
  EXPECT_DOUBLE_EQ(retrieval_zh_score("段落5", "段落5"), 1.0);
  // numbers [12, 2] -> 1/2.
  EXPECT_DOUBLE_EQ(retrieval_zh_score("答案是段落12，不是段落2", "段落2"), 0.5);
  EXPECT_THROW(retrieval_score("Paragraph 1", "Paragraph one"), bosch::Error);
  // numbers [12, 13] -> 1/2; no numbers -> 0.
  EXPECT_DOUBLE_EQ(count_score("There are 12 unique paragraphs, not 13", "12"), 0.5);
  EXPECT_DOUBLE_EQ(count_score("12", "12"), 1.0);
  EXPECT_DOUBLE_EQ(count_score("", "12"), 0.0);
}

TEST(LongBenchMetrics, DifflibAndFuzz) {
  // Longest block "bcd" (3): ratio 2*3/8 = 0.75 -> 75.
  EXPECT_DOUBLE_EQ(difflib_ratio("abcd", "bcde"), 0.75);
  EXPECT_EQ(fuzz_ratio("abcd", "bcde"), 75);
  // Only "q" matches: 100 * 2/80 = 2.5 -> Python round half to even -> 2.
  EXPECT_EQ(fuzz_ratio("q" + std::string(39, 'a'), "q" + std::string(39, 'b')), 2);
  // 100 * 2/16 = 12.5 -> 12.
  EXPECT_EQ(fuzz_ratio("q" + std::string(7, 'a'), "q" + std::string(7, 'b')), 12);
  // "return a " (9) + " b;" (3) = 12 of 26: 92.3 -> 92.
  EXPECT_EQ(fuzz_ratio("return a + b;", "return a - b;"), 92);
  EXPECT_EQ(fuzz_ratio("", ""), 100);  // equivalence is checked before emptiness
  EXPECT_EQ(fuzz_ratio("", "x"), 0);
  // autojunk: in a b of 200 'a's, 'a' is "popular" and dropped from the index, so nothing
  // matches "baaaaaaaaaa" (an LCS ratio would be 20/211) ...
  EXPECT_DOUBLE_EQ(difflib_ratio("b" + std::string(10, 'a'), std::string(200, 'a')), 0.0);
  // ... while a match found at (0, 0) is still extended over popular elements: 20/210.
  EXPECT_DOUBLE_EQ(difflib_ratio(std::string(10, 'a'), std::string(200, 'a')), 20.0 / 210.0);
  // Below 200 items there is no autojunk: the ten a's match -> 2*10/(11+199).
  EXPECT_DOUBLE_EQ(difflib_ratio("b" + std::string(10, 'a'), std::string(199, 'a')), 20.0 / 210.0);
  EXPECT_DOUBLE_EQ(difflib_ratio("", ""), 1.0);
}

TEST(LongBenchMetrics, CodeSim) {
  // First line without ` # // is "return x;" -> identical -> 1.
  EXPECT_DOUBLE_EQ(code_sim_score("\n\n# comment\n// c\nreturn x;\nfoo", "return x;"), 1.0);
  EXPECT_DOUBLE_EQ(code_sim_score("```python\nx = 1", "x = 1"), 1.0);
  // No usable line -> "" vs gold -> 0.
  EXPECT_DOUBLE_EQ(code_sim_score("# only a comment", "x = 1"), 0.0);
  EXPECT_DOUBLE_EQ(code_sim_score("return a + b;", "return a - b;"), 0.92);
}

TEST(LongBenchMetrics, ScoreSampleMaxOverAnswersAndFirstLine) {
  // First line "Paris" -> qa_f1 1 against "Paris" (max over answers).
  EXPECT_DOUBLE_EQ(score_sample(Metric::QaF1, true, "\nParis\nQuestion: what?", {"London", "Paris"}, {}), 1.0);
  // Without the rule the extra line dilutes: [paris question what] vs [paris] -> P 1/3, R 1 -> 0.5.
  EXPECT_DOUBLE_EQ(score_sample(Metric::QaF1, false, "\nParis\nQuestion: what?", {"London", "Paris"}, {}), 0.5);
  EXPECT_DOUBLE_EQ(score_sample(Metric::QaF1, false, "Paris", {}, {}), 0.0);
}
