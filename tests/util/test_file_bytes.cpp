// util/file_bytes: a file's bytes mapped or copied into memory advised to use 2 MiB pages are
// the same bytes; errors name the path; BOSCH_MMAP picks the weights' hold and refuses other
// values; page_report tells file-backed from anonymous memory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>

#include "../test_support.h"
#include "util/error.h"
#include "util/file_bytes.h"

using namespace bosch;

namespace {

std::string write_file(const std::filesystem::path& p, size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(g());
  std::ofstream(p, std::ios::binary).write(s.data(), static_cast<std::streamsize>(s.size()));
  return s;
}

}  // namespace

TEST(FileBytes, MapAndCopyHoldTheSameBytes) {
  const auto dir = bosch::tests::temp_dir("file_bytes");
  // Sizes around page and huge-page boundaries, and one above 64 MiB (more than one read call).
  for (size_t n : {size_t{1}, size_t{4095}, size_t{4097}, (size_t{2} << 20) + 3, (size_t{65} << 20) + 11}) {
    const auto path = dir / std::to_string(n);
    const std::string want = write_file(path, n, static_cast<uint32_t>(n));
    FileBytes mapped(path.string(), FileHold::Map), copied(path.string(), FileHold::Copy);
    ASSERT_EQ(mapped.size(), n);
    ASSERT_EQ(copied.size(), n);
    EXPECT_EQ(copied.hold(), FileHold::Copy);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(copied.data()) % (size_t{2} << 20), 0u);  // starts on a huge page
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(mapped.data()), n), want);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(copied.data()), n), want);
  }
  std::ofstream(dir / "empty").close();
  FileBytes empty((dir / "empty").string(), FileHold::Copy);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.data(), nullptr);
  std::filesystem::remove_all(dir);
}

TEST(FileBytes, ErrorsNameThePath) {
  const auto dir = bosch::tests::temp_dir("file_bytes_err");
  for (FileHold h : {FileHold::Map, FileHold::Copy}) {
    try {
      FileBytes f((dir / "missing.gguf").string(), h);
      FAIL() << "no error for a missing file";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("missing.gguf"), std::string::npos) << e.what();
    }
    EXPECT_THROW(FileBytes(dir.string(), h), Error);  // a directory
  }
  std::filesystem::remove_all(dir);
}

TEST(FileBytes, BoschMmapPicksTheWeightsHold) {
  const char* before = std::getenv("BOSCH_MMAP");
  const std::string saved = before ? before : "";
  setenv("BOSCH_MMAP", "1", 1);
  EXPECT_EQ(weights_file_hold(), FileHold::Map);
  setenv("BOSCH_MMAP", "0", 1);
  EXPECT_EQ(weights_file_hold(), FileHold::Copy);
  setenv("BOSCH_MMAP", "yes", 1);
  try {
    weights_file_hold();
    FAIL() << "BOSCH_MMAP=yes accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("BOSCH_MMAP"), std::string::npos) << e.what();
  }
  if (before) setenv("BOSCH_MMAP", saved.c_str(), 1);
  else unsetenv("BOSCH_MMAP");
}

TEST(FileBytes, PageReportTellsMappedFromCopied) {
  const auto dir = bosch::tests::temp_dir("file_bytes_pages");
  const auto path = dir / "w";
  write_file(path, size_t{4} << 20, 7);
  FileBytes mapped(path.string(), FileHold::Map), copied(path.string(), FileHold::Copy);
  volatile uint8_t sink = 0;
  for (size_t i = 0; i < mapped.size(); i += 4096) sink = sink + mapped.data()[i];  // make it resident
  const PageReport m = page_report({mapped.data()}), c = page_report({copied.data()});
  if (m.file_backed + m.anonymous == 0) GTEST_SKIP() << "/proc/self/smaps is not readable here: no page report";
  EXPECT_GE(m.file_backed, mapped.size());
  EXPECT_EQ(m.anonymous, 0u);
  EXPECT_GE(c.anonymous, copied.size());
  EXPECT_EQ(c.file_backed, 0u);
  EXPECT_NE(page_report_text(c).find("copied"), std::string::npos);
  EXPECT_NE(page_report_text(m).find("mapped"), std::string::npos);
  const PageReport none = page_report({});
  EXPECT_EQ(none.file_backed + none.anonymous + none.huge, 0u);
  std::filesystem::remove_all(dir);
}
