#include "util/file_bytes.h"

#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "util/error.h"
#include "util/mpi_comm.h"

namespace bosch {

FileHold weights_file_hold() {
  if (const char* e = std::getenv("BOSCH_MMAP"); e && *e) {
    const std::string_view v(e);
    check(v == "0" || v == "1", "BOSCH_MMAP: expected 0 (copy the weights into huge pages) or 1 (map the file), found '{}'",
          v.substr(0, 40));
    return v == "1" ? FileHold::Map : FileHold::Copy;
  }
  if (mpi::distributed()) return FileHold::Map;
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(thp, modes);
  const bool available = modes.find("[always]") != std::string::npos || modes.find("[madvise]") != std::string::npos;
  return available ? FileHold::Copy : FileHold::Map;
}

size_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  size_t kb = 0;
  while (in >> key >> kb) {
    if (key == "MemAvailable:") return kb * 1024;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

namespace {

// Reads all of fd into p (pread in 64 MiB pieces; EINTR retried).
void read_all(int fd, uint8_t* p, size_t n, const std::string& path) {
  size_t got = 0;
  while (got < n) {
    const size_t want = std::min(n - got, size_t{64} << 20);
    const ssize_t r = ::pread(fd, p + got, want, static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail("cannot read '{}' at byte {}: {}", path, got, std::strerror(errno));
    if (r == 0) fail("cannot read '{}': it ended at byte {} of {} (changed while being read?)", path, got, n);
    got += static_cast<size_t>(r);
  }
}

}  // namespace

FileBytes::FileBytes(const std::string& path, FileHold hold) : path_(path), hold_(hold) {
  // O_NONBLOCK: a FIFO must not block the open; the type check refuses it next.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail("cannot open '{}': {}", path, std::strerror(errno));
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("'{}' is not a regular file", path);
  }
  note_input(path, st);
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) {
    ::close(fd);
    return;
  }
  if (hold_ == FileHold::Copy) {
    // A copy cannot be paged out, a mapping can: a file that would leave under 1/16 of the memory
    // free (or not fit at all) is mapped instead of having the process killed while reading it.
    const size_t avail = mem_available_bytes();
    if (avail > 0 && size_ > avail - avail / 16) {
      std::fprintf(stderr, "bosch: note: '%s' (%.2f GiB) is mapped, not copied into memory: %.2f GiB is available\n",
                   path.c_str(), static_cast<double>(size_) / (1u << 30), static_cast<double>(avail) / (1u << 30));
      hold_ = FileHold::Map;
    }
  }
  if (hold_ == FileHold::Map) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) fail("cannot mmap '{}': {}", path, std::strerror(errno));
    region_ = p;
    region_size_ = size_;
    data_ = static_cast<const uint8_t*>(p);
    return;
  }
  // Copy: reserve 2 MiB more than needed so the buffer can start on a huge-page boundary.
  const size_t huge = size_t{2} << 20;
  region_size_ = size_ + huge;
  void* r = ::mmap(nullptr, region_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (r == MAP_FAILED) {
    ::close(fd);
    fail("cannot allocate {} bytes to hold '{}': {} (BOSCH_MMAP=1 maps the file instead)", size_, path,
         std::strerror(errno));
  }
  region_ = r;
  auto* p = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(r) + huge - 1) & ~(huge - 1));
  ::madvise(p, size_, MADV_HUGEPAGE);  // advice only: without huge pages the copy still works
  try {
    read_all(fd, p, size_, path);
  } catch (...) {
    ::close(fd);
    ::munmap(region_, region_size_);
    throw;
  }
  ::close(fd);
  ::mprotect(region_, region_size_, PROT_READ);  // read-only, as the mapping would be
  data_ = p;
}

FileBytes::~FileBytes() {
  if (region_) ::munmap(region_, region_size_);
}

PageReport page_report(std::vector<const void*> ptrs) {
  PageReport rep;
  std::sort(ptrs.begin(), ptrs.end());
  std::ifstream in("/proc/self/smaps");
  std::string line;
  uintptr_t lo = 0, hi = 0;
  bool holds = false, file_backed = false;
  while (std::getline(in, line)) {
    uintptr_t a = 0, b = 0;
    char dash = 0;
    std::istringstream head(line);
    // A mapping's first line: "start-end perms offset dev inode [path]".
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find(':') > line.find(' ') &&
        (head >> std::hex >> a >> dash >> b) && dash == '-') {
      lo = a, hi = b;
      auto it = std::lower_bound(ptrs.begin(), ptrs.end(), reinterpret_cast<const void*>(lo));
      holds = it != ptrs.end() && reinterpret_cast<uintptr_t>(*it) < hi;
      std::string perms, off, dev, inode, path;
      head >> perms >> off >> dev >> inode >> path;
      file_backed = !path.empty() && path[0] == '/';
      continue;
    }
    if (!holds) continue;
    const auto kb = [&](std::string_view key) -> size_t {
      if (line.compare(0, key.size(), key) != 0) return 0;
      return static_cast<size_t>(std::strtoull(line.c_str() + key.size(), nullptr, 10)) * 1024;
    };
    const size_t rss = kb("Rss:");
    (file_backed ? rep.file_backed : rep.anonymous) += rss;
    rep.huge += kb("AnonHugePages:") + kb("FilePmdMapped:");
  }
  return rep;
}

std::string page_report_text(const PageReport& r) {
  if (r.file_backed + r.anonymous == 0) return "unknown (no /proc/self/smaps, or no weights held in the file's bytes)";
  const auto gib = [](size_t b) { return static_cast<double>(b) / double(1u << 30); };
  const char* how = r.anonymous > r.file_backed ? "copied" : "mapped";
  return fmt::format("{}: {:.3f} GiB resident, {:.3f} GiB of it in huge pages", how, gib(r.file_backed + r.anonymous),
                     gib(r.huge));
}

}  // namespace bosch
