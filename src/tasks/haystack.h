// Haystack text for NIAH: an endless stream of sentences (needles go between sentences).
//   noise  : RULER's "The grass is green. The sky is blue. ..." repeated
//   markov : the generated filler language (tasks/markov_text.h)
//   file   : any UTF-8 text file, split into sentences, read from a random start, wrapping
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tasks/markov_text.h"
#include "tasks/task_rng.h"

namespace bosch {

enum class HaystackKind { noise, markov, file };

class Haystack {
 public:
  // "noise", "markov", or a path to a text file.
  static Haystack from_arg(const std::string& arg);
  static Haystack noise();
  static Haystack markov();
  static Haystack from_file(const std::string& path);

  HaystackKind kind() const { return kind_; }
  std::string description() const;  // "noise", "markov", "file:PATH"
  // A sentence stream for one sample; `rng` picks the start (file) or the words (markov).
  class Stream {
   public:
    std::string next();
   private:
    friend class Haystack;
    Stream(const Haystack& h, TaskRng rng);
    const Haystack* h_;
    TaskRng rng_;
    size_t pos_ = 0;
  };
  Stream stream(TaskRng rng) const { return Stream(*this, rng); }

  // Splits text into sentences at '.', '!' or '?' followed by white space; white space runs
  // (newlines included) become single spaces. Exposed for tests.
  static std::vector<std::string> split_sentences(const std::string& text);

 private:
  HaystackKind kind_ = HaystackKind::noise;
  std::string path_;
  std::shared_ptr<const std::vector<std::string>> sentences_;  // file
  std::shared_ptr<const MarkovText> markov_;
};

}  // namespace bosch
