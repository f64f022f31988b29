// Progress with rate and ETA on stderr: one line redrawn at most every 200 ms on a terminal,
// a plain line every 10 s when piped. Silent when BOSCH_QUIET is set. Anything longer than a
// few seconds reports through this.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace bosch {

// True while BOSCH_QUIET is set or a QuietScope is alive: progress lines and stage summaries
// stay silent (the inner runs of a larger job that reports its own progress).
bool progress_quiet();
class QuietScope {
 public:
  QuietScope();
  ~QuietScope();
  QuietScope(const QuietScope&) = delete;
  QuietScope& operator=(const QuietScope&) = delete;
};

class Progress {
 public:
  Progress(std::string label, size_t total);
  ~Progress();                      // finishes the line
  void add(size_t n = 1, const std::string& note = "");
  void set(size_t done, const std::string& note = "");
  void finish();

 private:
  void draw(bool force);
  std::string label_;
  size_t total_, done_ = 0;
  size_t printed_ = SIZE_MAX;  // done_ of the last plain line (a pipe gets no repeated last line)
  std::string note_;
  std::chrono::steady_clock::time_point start_, last_;
  bool finished_ = false, quiet_, tty_;
};

}  // namespace bosch
