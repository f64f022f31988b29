#include "tasks/longbench_prompts.h"

#include "util/checked.h"
#include "util/error.h"

namespace bosch::longbench {

namespace {

// Templates verbatim from THUDM/LongBench config/dataset2prompt.json (the 21-dataset version;
// older copies spell "asconcisely" in narrativeqa).
constexpr const char* kQaMultiDoc =
    "Answer the question based on the given passages. Only give me the answer and do not output "
    "any other words.\n\nThe following are given passages.\n{context}\n\nAnswer the question "
    "based on the given passages. Only give me the answer and do not output any other words.\n\n"
    "Question: {input}\nAnswer:";

using M = Metric;

const std::vector<TaskSpec> kTasks = {
    {"narrativeqa",
     "You are given a story, which can be either a novel or a movie script, and a question. Answer "
     "the question as concisely as you can, using a single phrase if possible. Do not provide any "
     "explanation.\n\nStory: {context}\n\nNow, answer the question based on the story as concisely "
     "as you can, using a single phrase if possible. Do not provide any explanation.\n\nQuestion: "
     "{input}\n\nAnswer:",
     128, M::QaF1, true, false, false},
    {"qasper",
     "You are given a scientific article and a question. Answer the question as concisely as you "
     "can, using a single phrase or sentence if possible. If the question cannot be answered based "
     "on the information in the article, write \"unanswerable\". If the question is a yes/no "
     "question, answer \"yes\", \"no\", or \"unanswerable\". Do not provide any explanation.\n\n"
     "Article: {context}\n\n Answer the question based on the above article as concisely as you "
     "can, using a single phrase or sentence if possible. If the question cannot be answered based "
     "on the information in the article, write \"unanswerable\". If the question is a yes/no "
     "question, answer \"yes\", \"no\", or \"unanswerable\". Do not provide any explanation.\n\n"
     "Question: {input}\n\nAnswer:",
     128, M::QaF1, true, false, true},
    {"multifieldqa_en",
     "Read the following text and answer briefly.\n\n{context}\n\nNow, answer the following "
     "question based on the above text, only give me the answer and do not output any other "
     "words.\n\nQuestion: {input}\nAnswer:",
     64, M::QaF1, true, false, true},
    {"multifieldqa_zh",
     "阅读以下文字并用中文简短回答：\n\n{context}\n\n现在请基于上面的文章回答下面的问题，只告诉我答案，"
     "不要输出任何其他字词。\n\n问题：{input}\n回答：",
     64, M::QaF1Zh, true, false, false},
    {"hotpotqa", kQaMultiDoc, 32, M::QaF1, true, false, true},
    {"2wikimqa", kQaMultiDoc, 32, M::QaF1, true, false, true},
    {"musique", kQaMultiDoc, 32, M::QaF1, true, false, false},
    {"dureader",
     "请基于给定的文章回答下述问题。\n\n文章：{context}\n\n请基于上述文章回答下面的问题。\n\n问题：{input}\n回答：",
     128, M::RougeZh, true, false, false},
    {"gov_report",
     "You are given a report by a government agency. Write a one-page summary of the report.\n\n"
     "Report:\n{context}\n\nNow, write a one-page summary of the report.\n\nSummary:",
     512, M::Rouge, true, false, true},
    {"qmsum",
     "You are given a meeting transcript and a query containing a question or instruction. Answer "
     "the query in one or more sentences.\n\nTranscript:\n{context}\n\nNow, answer the query based "
     "on the above meeting transcript in one or more sentences.\n\nQuery: {input}\nAnswer:",
     512, M::Rouge, true, false, false},
    {"multi_news",
     "You are given several news passages. Write a one-page summary of all news. \n\nNews:\n"
     "{context}\n\nNow, write a one-page summary of all the news.\n\nSummary:",
     512, M::Rouge, true, false, true},
    {"vcsum", "下面有一段会议记录，请你阅读后，写一段总结，总结会议的内容。\n会议记录：\n{context}\n\n会议总结：",
     512, M::RougeZh, true, false, false},
    {"trec",
     "Please determine the type of the question below. Here are some examples of questions.\n\n"
     "{context}\n{input}",
     64, M::Classification, false, true, true},
    {"triviaqa",
     "Answer the question based on the given passage. Only give me the answer and do not output "
     "any other words. The following are some examples.\n\n{context}\n\n{input}",
     32, M::QaF1, false, true, true},
    {"samsum",
     "Summarize the dialogue into a few short sentences. The following are some examples.\n\n"
     "{context}\n\n{input}",
     128, M::Rouge, false, true, true},
    {"lsht", "请判断给定新闻的类别，下面是一些例子。\n\n{context}\n{input}", 64, M::Classification, false,
     true, false},
    {"passage_count",
     "There are some paragraphs below sourced from Wikipedia. Some of them may be duplicates. "
     "Please carefully read these paragraphs and determine how many unique paragraphs there are "
     "after removing duplicates. In other words, how many non-repeating paragraphs are there in "
     "total?\n\n{context}\n\nPlease enter the final count of unique paragraphs after removing "
     "duplicates. The output format should only contain the number, such as 1, 2, 3, and so on."
     "\n\nThe final answer is: ",
     32, M::Count, true, false, true},
    {"passage_retrieval_en",
     "Here are 30 paragraphs from Wikipedia, along with an abstract. Please determine which "
     "paragraph the abstract is from.\n\n{context}\n\nThe following is an abstract.\n\n{input}\n\n"
     "Please enter the number of the paragraph that the abstract is from. The answer format must "
     "be like \"Paragraph 1\", \"Paragraph 2\", etc.\n\nThe answer is: ",
     32, M::Retrieval, true, false, true},
    {"passage_retrieval_zh",
     "以下是若干段落文字，以及其中一个段落的摘要。请确定给定的摘要出自哪一段。\n\n{context}\n\n下面是一个摘要\n\n"
     "{input}\n\n请输入摘要所属段落的编号。答案格式必须是\"段落1\"，\"段落2\"等格式\n\n答案是：",
     32, M::RetrievalZh, true, false, false},
    {"lcc", "Please complete the code given below. \n{context}Next line of code:\n", 64, M::CodeSim,
     false, false, true},
    {"repobench-p", "Please complete the code given below. \n{context}{input}Next line of code:\n", 64,
     M::CodeSim, false, false, true},
};

}  // namespace

const std::vector<TaskSpec>& all_tasks() { return kTasks; }

const TaskSpec* find_task(std::string_view name) {
  if (name.size() > 2 && name.substr(name.size() - 2) == "_e") name.remove_suffix(2);
  for (const auto& t : kTasks)
    if (name == t.name) return &t;
  return nullptr;
}

const TaskSpec& task_or_fail(std::string_view name) {
  if (const TaskSpec* t = find_task(name)) return *t;
  std::string known;
  for (const auto& t : kTasks) known += std::string(known.empty() ? "" : ", ") + t.name;
  fail("longbench: unknown dataset '{}' (expected one of: {})", excerpt(name), known);
}

std::string fill_template(std::string_view tmpl, std::string_view context, std::string_view input) {
  std::string out;
  size_t i = 0;
  while (i < tmpl.size()) {
    size_t open = tmpl.find('{', i);
    if (open == std::string_view::npos) {
      out += tmpl.substr(i);
      break;
    }
    out += tmpl.substr(i, open - i);
    size_t close = tmpl.find('}', open);
    check(close != std::string_view::npos, "longbench: template has an unclosed '{{' at {}", open);
    std::string_view field = tmpl.substr(open + 1, close - open - 1);
    if (field == "context") out += context;
    else if (field == "input") out += input;
    else fail("longbench: template field '{{{}}}' is not one of {{context}}, {{input}}", field);
    i = close + 1;
  }
  return out;
}

std::vector<int32_t> middle_truncate(const std::vector<int32_t>& ids, int budget) {
  check(budget >= 2, "longbench: prompt token budget must be at least 2 (got {})", budget);
  if (ids.size() <= size_t(budget)) return ids;
  const size_t half = size_t(budget / 2);
  std::vector<int32_t> out(ids.begin(), ids.begin() + half);
  out.insert(out.end(), ids.end() - half, ids.end());
  return out;
}

}  // namespace bosch::longbench
