// Progress on a pipe: plain lines, rate-limited, the last state printed once.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "util/progress.h"

namespace bosch {
namespace {

// Runs f with stderr sent to a temporary file (not a terminal); returns what it wrote.
template <class F>
std::string captured_stderr(F f) {
  std::fflush(stderr);
  std::FILE* tmp = std::tmpfile();
  const int saved = dup(fileno(stderr));
  dup2(fileno(tmp), fileno(stderr));
  f();
  std::fflush(stderr);
  dup2(saved, fileno(stderr));
  close(saved);
  std::rewind(tmp);
  std::string out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, tmp)) out.append(buf, n);
  std::fclose(tmp);
  return out;
}

size_t lines(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

TEST(Progress, PipeGetsOneFinalLineForAQuickJob) {
  const std::string out = captured_stderr([] {
    Progress p("unit job", 3);
    for (int i = 0; i < 3; ++i) p.add(1);
  });
  EXPECT_EQ(lines(out, "unit job"), 1u) << out;
  EXPECT_NE(out.find("unit job 3/3 (100%)"), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << "no terminal redraws into a pipe: " << out;
}

TEST(Progress, QuietScopeSilencesIt) {
  const std::string out = captured_stderr([] {
    QuietScope quiet;
    Progress p("silent job", 2);
    p.add(2);
  });
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace bosch
