#include "util/progress.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include <unistd.h>

namespace bosch {

namespace {
std::string fmt_seconds(double s) {
  if (s < 0 || s > 1e7) return "?";
  int t = static_cast<int>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, (t / 60) % 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}
std::atomic<int> quiet_scopes{0};
}  // namespace

bool progress_quiet() { return quiet_scopes.load() > 0 || std::getenv("BOSCH_QUIET") != nullptr; }
QuietScope::QuietScope() { ++quiet_scopes; }
QuietScope::~QuietScope() { --quiet_scopes; }

Progress::Progress(std::string label, size_t total)
    : label_(std::move(label)), total_(total), start_(std::chrono::steady_clock::now()),
      last_(start_), quiet_(progress_quiet()), tty_(isatty(fileno(stderr)) != 0) {}

Progress::~Progress() { finish(); }

void Progress::add(size_t n, const std::string& note) { set(done_ + n, note); }

void Progress::set(size_t done, const std::string& note) {
  done_ = done;
  if (!note.empty()) note_ = note;
  draw(false);
}

void Progress::draw(bool force) {
  if (quiet_) return;
  auto now = std::chrono::steady_clock::now();
  // A terminal gets one line redrawn every 200 ms; a pipe or file plain lines every 10 s.
  if (!force && now - last_ < std::chrono::milliseconds(tty_ ? 200 : 10000)) return;
  last_ = now;
  double el = std::chrono::duration<double>(now - start_).count();
  double rate = el > 0 ? done_ / el : 0;
  double eta = (rate > 0 && total_ >= done_) ? (total_ - done_) / rate : -1;
  std::string line = fmt::format("{}{} {}/{} ({:.0f}%) {:.1f}/s elapsed {} eta {} {}", tty_ ? "\r" : "", label_, done_,
                                 total_, total_ ? 100.0 * done_ / total_ : 100.0, rate,
                                 fmt_seconds(el), fmt_seconds(eta), note_);
  if (tty_) {
    std::fprintf(stderr, "%-100s", line.c_str());
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
    printed_ = done_;
  }
  std::fflush(stderr);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (quiet_ || (!tty_ && printed_ == done_)) return;
  draw(true);
  if (tty_) std::fprintf(stderr, "\n");
}

}  // namespace bosch
