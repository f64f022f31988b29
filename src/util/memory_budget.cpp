#include "util/memory_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <string>

#include "util/error.h"
#include "util/file_bytes.h"

namespace bosch {

namespace {

// What the process maps now (/proc/self/statm, first field, in pages); 0 if unknown.
uint64_t mapped_bytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t pages = 0;
  if (!(in >> pages)) return 0;
  return pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

uint64_t memory_budget_bytes() {
  uint64_t budget = std::numeric_limits<uint64_t>::max();
  if (const size_t avail = mem_available_bytes(); avail > 0) budget = avail;
  struct rlimit rl{};
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    const uint64_t limit = rl.rlim_cur, used = mapped_bytes();
    budget = std::min(budget, limit > used ? limit - used : 0);
  }
  return budget;
}

void check_memory_for(uint64_t bytes, std::string_view what) {
  const uint64_t budget = memory_budget_bytes();
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  check(bytes <= budget,
        "{} needs {:.2f} GiB, more than the {:.2f} GiB this process can have now (MemAvailable, and the "
        "address-space limit less what is mapped); ask for less",
        what, static_cast<double>(bytes) / kGiB, static_cast<double>(budget) / kGiB);
}

}  // namespace bosch
