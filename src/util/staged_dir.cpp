#include "util/staged_dir.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2 (glibc >= 2.28)
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "util/atomic_file.h"
#include "util/error.h"

namespace bosch {

namespace fs = std::filesystem;

namespace {

// A fresh sibling of `dir` named ".NAME.KIND.PID.TAG", created by mkdir (EEXIST: another tag).
std::string fresh_sibling(const std::string& dir, const char* kind, bool create) {
  const fs::path p = fs::path(dir).lexically_normal();
  const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
  for (int attempt = 0; attempt < 64; ++attempt) {
    const std::string name = (parent / fmt::format(".{}.{}.{}", p.filename().string(), kind, fresh_name_tag())).string();
    if (!create) {
      struct stat st{};
      if (::lstat(name.c_str(), &st) != 0 && errno == ENOENT) return name;
      continue;
    }
    if (::mkdir(name.c_str(), 0755) == 0) return name;
    if (errno != EEXIST) fail("cannot create a folder beside '{}': {}", dir, std::strerror(errno));
  }
  fail("cannot find a free name beside '{}'", dir);
}

}  // namespace

StagedDir::StagedDir(std::string dir, std::string_view flag, std::vector<std::string> owned)
    : dir_(std::move(dir)), flag_(flag) {
  check(!dir_.empty(), "{}: empty path", flag_);
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();  // "out/" names the folder out
  const std::string name = fs::path(dir_).lexically_normal().filename().string();
  check(!name.empty() && name != "." && name != "..", "{} '{}': name a folder of its own, not '.', '..' or '/'",
        flag_, dir_);
  struct stat st{};
  if (::lstat(dir_.c_str(), &st) == 0) {
    check(S_ISDIR(st.st_mode), "{} '{}' exists and is not a folder; it is replaced only by a folder", flag_, dir_);
    check_output_path(dir_, flag_);
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string n = e.path().filename().string();
      check(std::find(owned.begin(), owned.end(), n) != owned.end(),
            "{} '{}' exists and holds '{}', which this output does not write; the folder would be replaced "
            "as a whole, so name a new or empty folder", flag_, dir_, n);
    }
  }
  const fs::path parent = fs::path(dir_).lexically_normal().parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    check(!ec, "{} '{}': cannot create the folder that holds it: {}", flag_, dir_, ec.message());
  }
  staged_ = fresh_sibling(dir_, "tmp", true);
}

StagedDir::~StagedDir() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(staged_, ec);  // best effort: the target is untouched
}

void StagedDir::commit() {
  check(!committed_, "{} '{}': committed twice", flag_, dir_);
  struct stat st{};
  const bool exists = ::lstat(dir_.c_str(), &st) == 0;
  if (!exists) {
    check(::rename(staged_.c_str(), dir_.c_str()) == 0, "{} '{}': cannot move the finished folder into place: {}",
          flag_, dir_, std::strerror(errno));
  } else {
    check(S_ISDIR(st.st_mode), "{} '{}' became something other than a folder during the run", flag_, dir_);
    std::string old;
    if (::renameat2(AT_FDCWD, staged_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) == 0) {
      old = staged_;  // the exchange left the previous contents at the staged name
    } else {
      // No atomic exchange here (EINVAL, ENOSYS on some file systems): the old folder aside,
      // then the new one in; a failure in between is put back.
      old = fresh_sibling(dir_, "old", false);
      check(::rename(dir_.c_str(), old.c_str()) == 0, "{} '{}': cannot move the previous folder aside: {}", flag_,
            dir_, std::strerror(errno));
      if (::rename(staged_.c_str(), dir_.c_str()) != 0) {
        const int err = errno;
        ::rename(old.c_str(), dir_.c_str());
        fail("{} '{}': cannot move the finished folder into place: {}", flag_, dir_, std::strerror(err));
      }
    }
    std::error_code ec;
    fs::remove_all(old, ec);
  }
  committed_ = true;
}

}  // namespace bosch
