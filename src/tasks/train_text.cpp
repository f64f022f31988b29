#include "tasks/train_text.h"

#include "util/error.h"

namespace bosch {

TrainText train_text_from_sample(const TaskSample& s) {
  TrainText t;
  t.text = s.prompt + s.continuation;
  t.n_tokens = s.n_tokens();
  size_t from = 0;
  for (const auto& a : s.answers) {
    size_t at = s.continuation.find(a.text, from);
    check(at != std::string::npos, "task sample ({}): answer '{}' not in its continuation", s.family, a.text);
    t.answer_spans.push_back({s.prompt.size() + at, s.prompt.size() + at + a.text.size()});
    from = at + a.text.size();
  }
  return t;
}

nlohmann::json train_text_to_json(const TrainText& t) {
  nlohmann::json spans = nlohmann::json::array();
  for (auto [b, e] : t.answer_spans) spans.push_back({b, e});
  return {{"text", t.text}, {"answer_spans", spans}};
}

}  // namespace bosch
