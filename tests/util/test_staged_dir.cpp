// StagedDir (util/staged_dir.h): a multi-file output appears whole or not at all, and an existing
// folder is replaced only when it holds nothing but what the output writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/staged_dir.h"
#include "../test_support.h"

using namespace bosch;
namespace fs = std::filesystem;

namespace {

size_t entries(const fs::path& d) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) ++n;
  return n;
}

}  // namespace

TEST(StagedDir, ANewFolderAppearsWholeOnCommit) {
  const auto root = tests::temp_dir("staged_new");
  const std::string out = (root / "sub" / "out").string();
  {
    StagedDir d(out, "--out", {"a.txt", "b.txt"});
    write_file_atomic(d.path() + "/a.txt", "A");
    EXPECT_FALSE(fs::exists(out));  // nothing at the target until commit
    write_file_atomic(d.path() + "/b.txt", "B");
    d.commit();
  }
  EXPECT_EQ(read_file(out + "/a.txt"), "A");
  EXPECT_EQ(read_file(out + "/b.txt"), "B");
  EXPECT_EQ(entries(root / "sub"), 1u);  // no staging folder left beside it
  fs::remove_all(root);
}

TEST(StagedDir, AnExistingOutputIsReplacedAsAWhole) {
  const auto root = tests::temp_dir("staged_replace");
  const fs::path out = root / "out";
  fs::create_directories(out);
  std::ofstream(out / "a.txt") << "old A";
  std::ofstream(out / "b.txt") << "old B";
  {
    StagedDir d((out.string() + "/"), "--out", {"a.txt", "b.txt"});
    write_file_atomic(d.path() + "/a.txt", "new A");
    d.commit();
  }
  EXPECT_EQ(read_file((out / "a.txt").string()), "new A");
  EXPECT_FALSE(fs::exists(out / "b.txt"));  // the old folder went as a whole
  EXPECT_EQ(entries(root), 1u);
  fs::remove_all(root);
}

TEST(StagedDir, AFailureBeforeCommitLeavesTheTargetAsItWas) {
  const auto root = tests::temp_dir("staged_fail");
  const fs::path out = root / "out";
  fs::create_directories(out);
  std::ofstream(out / "a.txt") << "old A";
  try {
    StagedDir d(out.string(), "--out", {"a.txt", "b.txt"});
    write_file_atomic(d.path() + "/a.txt", "new A");
    throw std::runtime_error("the run failed halfway");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(read_file((out / "a.txt").string()), "old A");
  EXPECT_EQ(entries(root), 1u);  // the staging folder was removed
  fs::remove_all(root);
}

TEST(StagedDir, AFolderWithOtherFilesOrNotAFolderIsRefusedBeforeAnyWork) {
  const auto root = tests::temp_dir("staged_refuse");
  const fs::path out = root / "out";
  fs::create_directories(out);
  std::ofstream(out / "thesis.tex") << "years of work";
  EXPECT_NE(tests::error_of([&] { StagedDir d(out.string(), "--report", {"report.md"}); })
                .find("holds 'thesis.tex', which this output does not write"),
            std::string::npos);
  EXPECT_EQ(read_file((out / "thesis.tex").string()), "years of work");
  std::ofstream(root / "file") << "x";
  EXPECT_NE(tests::error_of([&] { StagedDir d((root / "file").string(), "--out", {}); }).find("is not a folder"),
            std::string::npos);
  for (const char* bad : {".", "..", "/"})
    EXPECT_NE(tests::error_of([&] { StagedDir d(bad, "--out", {}); }).find("name a folder of its own"),
              std::string::npos)
        << bad;
  EXPECT_EQ(entries(root), 2u);
  fs::remove_all(root);
}
