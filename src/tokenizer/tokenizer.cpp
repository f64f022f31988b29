#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <mutex>

#include "util/utf8.h"

namespace bosch {

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  size_t start = !ids.empty() && bos_id_ >= 0 && ids[0] == bos_id_ ? 1 : 0;
  for (size_t i = start; i < ids.size(); ++i) {
    std::string b = token_bytes(ids[i]);
    if (i == start && strip_leading_space_ && !b.empty() && b[0] == ' ') b.erase(0, 1);
    out += b;
  }
  return out;
}

bool Tokenizer::is_eog(int32_t id) const {
  return id >= 0 && (id == eos_id_ || std::find(eog_ids_.begin(), eog_ids_.end(), id) != eog_ids_.end());
}

ChatFamily detect_chat_family(const std::string& t) {
  if (t.empty()) return ChatFamily::None;
  if (t.find("<|im_start|>") != std::string::npos)
    return t.find("You are Qwen, created by Alibaba Cloud.") != std::string::npos ? ChatFamily::ChatMLQwen25System
                                                                                   : ChatFamily::ChatML;
  if (t.find("<|start_header_id|>") != std::string::npos)
    return t.find("Cutting Knowledge Date") != std::string::npos ? ChatFamily::Llama31 : ChatFamily::Llama3;
  return ChatFamily::None;
}

namespace {
std::string trim(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}
}  // namespace

// What the families' Jinja templates render for one user turn with add_generation_prompt=True
// (Qwen3 with enable_thinking=False), minus the BOS the encoder adds.
std::string Tokenizer::apply_chat_template(const std::string& msg) const {
  const std::string& t = chat_template_;
  switch (detect_chat_family(t)) {
    case ChatFamily::ChatML:
    case ChatFamily::ChatMLQwen25System: {
      std::string s;
      if (detect_chat_family(t) == ChatFamily::ChatMLQwen25System)
        s += "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n";
      s += "<|im_start|>user\n" + msg + "<|im_end|>\n<|im_start|>assistant\n";
      if (t.find("enable_thinking") != std::string::npos) s += "<think>\n\n</think>\n\n";
      return s;
    }
    case ChatFamily::Llama3:
    case ChatFamily::Llama31: {
      std::string s;
      if (detect_chat_family(t) == ChatFamily::Llama31)
        s += "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n"
             "Today Date: 26 Jul 2024\n\n<|eot_id|>";
      s += "<|start_header_id|>user<|end_header_id|>\n\n" + trim(msg) +
           "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
      return s;
    }
    case ChatFamily::None:
      break;
  }
  if (!t.empty()) {
    static std::once_flag warned;
    std::call_once(warned, [] {
      std::fprintf(stderr, "bosch: warning: unknown chat template family (not ChatML or Llama-3); "
                           "using the plain text prompt\n");
    });
  }
  return msg;
}

std::string StreamDecoder::push(int32_t id) {
  if (first_ && id == tok_.bos_id()) return "";
  std::string b = tok_.token_bytes(id);
  if (first_ && tok_.strips_leading_space() && !b.empty() && b[0] == ' ') b.erase(0, 1);
  first_ = false;
  pending_ += b;
  size_t cut = utf8::complete_prefix(pending_);
  std::string out = utf8::sanitize(std::string_view(pending_).substr(0, cut));
  pending_.erase(0, cut);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out = utf8::sanitize(pending_);
  pending_.clear();
  return out;
}

}  // namespace bosch
