#include "tasks/task_sample.h"

#include "util/checked.h"

#include "util/error.h"

namespace bosch {

std::vector<std::string> TaskSample::answer_texts() const {
  std::vector<std::string> out;
  for (const auto& a : answers) out.push_back(a.text);
  return out;
}

nlohmann::json sample_to_json(const TaskSample& s) {
  nlohmann::json answers = nlohmann::json::array();
  for (const auto& a : s.answers) answers.push_back({{"text", a.text}, {"ids", a.ids}, {"begin", a.begin}});
  return {{"family", s.family},
          {"split", split_name(s.split)},
          {"length", s.length},
          {"depth", s.depth},
          {"seed", s.seed},
          {"n_prompt_tokens", s.prompt_ids.size()},
          {"prompt", s.prompt},
          {"prompt_ids", s.prompt_ids},
          {"continuation", s.continuation},
          {"continuation_ids", s.continuation_ids},
          {"answers", answers},
          {"keys", s.keys},
          {"values", s.values}};
}

TaskSample sample_from_json(const nlohmann::json& j) {
  auto get = [&](const char* field) -> const nlohmann::json& {
    check(j.is_object() && j.contains(field), "task sample: missing field '{}'", field);
    return j.at(field);
  };
  try {
    TaskSample s;
    s.family = get("family").get<std::string>();
    s.split = parse_split(get("split").get<std::string>());
    s.length = get("length").get<int>();
    s.depth = get("depth").get<double>();
    s.seed = get("seed").get<uint64_t>();
    s.prompt = get("prompt").get<std::string>();
    s.prompt_ids = get("prompt_ids").get<std::vector<int32_t>>();
    s.continuation = get("continuation").get<std::string>();
    s.continuation_ids = get("continuation_ids").get<std::vector<int32_t>>();
    for (const auto& a : get("answers")) {
      TaskAnswer t;
      t.text = a.at("text").get<std::string>();
      t.ids = a.at("ids").get<std::vector<int32_t>>();
      t.begin = a.at("begin").get<int>();
      check(t.begin >= 0 && t.begin + t.ids.size() <= s.continuation_ids.size(),
            "task sample: answer '{}' span is outside continuation_ids", t.text);
      s.answers.push_back(std::move(t));
    }
    s.keys = get("keys").get<std::vector<std::string>>();
    s.values = get("values").get<std::vector<std::string>>();
    return s;
  } catch (const nlohmann::json::exception& e) {
    fail("task sample: a field has the wrong type ({})", json_error_text(e));
  }
}

}  // namespace bosch
