#include "tasks/haystack.h"

#include <cctype>

#include "tasks/word_lists.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace bosch {

Haystack Haystack::noise() { return Haystack(); }

Haystack Haystack::markov() {
  Haystack h;
  h.kind_ = HaystackKind::markov;
  h.markov_ = std::make_shared<MarkovText>();
  return h;
}

Haystack Haystack::from_file(const std::string& path) {
  Haystack h;
  h.kind_ = HaystackKind::file;
  h.path_ = path;
  std::string text;
  try {
    text = read_file(path, kMaxTextBytes, "haystack");
  } catch (const Error& e) {
    fail("--haystack: {} (expected 'noise', 'markov' or a readable UTF-8 text file)", e.what());
  }
  auto s = split_sentences(text);
  check(!s.empty(), "--haystack '{}': the file has no text to use as a haystack", path);
  h.sentences_ = std::make_shared<const std::vector<std::string>>(std::move(s));
  return h;
}

Haystack Haystack::from_arg(const std::string& arg) {
  if (arg == "noise") return noise();
  if (arg == "markov") return markov();
  return from_file(arg);
}

std::string Haystack::description() const {
  switch (kind_) {
    case HaystackKind::noise: return "noise";
    case HaystackKind::markov: return "markov";
    case HaystackKind::file: return "file:" + path_;
  }
  return "?";
}

std::vector<std::string> Haystack::split_sentences(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    while (!cur.empty() && cur.back() == ' ') cur.pop_back();
    if (!cur.empty()) out.push_back(std::move(cur));
    cur.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty() && cur.back() != ' ') cur += ' ';
      continue;
    }
    cur += c;
    bool end = (c == '.' || c == '!' || c == '?') &&
               (i + 1 == text.size() || std::isspace(static_cast<unsigned char>(text[i + 1])));
    if (end) flush();
  }
  flush();
  return out;
}

Haystack::Stream::Stream(const Haystack& h, TaskRng rng) : h_(&h), rng_(rng) {
  if (h.kind_ == HaystackKind::file) pos_ = rng_.below(h.sentences_->size());
}

std::string Haystack::Stream::next() {
  switch (h_->kind_) {
    case HaystackKind::noise: {
      const auto& s = noise_sentences();
      return std::string(s[pos_++ % s.size()]);
    }
    case HaystackKind::markov: return h_->markov_->sentence(rng_);
    case HaystackKind::file: {
      const auto& s = *h_->sentences_;
      return s[pos_++ % s.size()];
    }
  }
  return {};
}

}  // namespace bosch
