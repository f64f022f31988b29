// An output folder written as a whole (issue #40: a multi-file output that failed halfway left
// the files it had written). Files go into a fresh sibling folder, created by mkdir so it is
// never an existing one; commit() swaps it in (an existing folder is exchanged atomically where
// the file system allows, else renamed aside) and removes the old contents. Without commit()
// the sibling is removed and the target is left as it was.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace bosch {

class StagedDir {
 public:
  // `dir`: the folder the user named; `flag` names the option in errors. An existing folder is
  // replaced as a whole by commit(), so it is refused before any work unless it holds only
  // names in `owned` (what this output writes: a folder named by mistake, ".", a home, keeps
  // its files), or an input, or it is not a folder.
  StagedDir(std::string dir, std::string_view flag, std::vector<std::string> owned);
  ~StagedDir();
  StagedDir(const StagedDir&) = delete;
  StagedDir& operator=(const StagedDir&) = delete;

  const std::string& path() const { return staged_; }  // where to write the files now
  void commit();

 private:
  std::string dir_, staged_, flag_;
  bool committed_ = false;
};

}  // namespace bosch
