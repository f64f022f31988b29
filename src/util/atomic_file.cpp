#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "util/error.h"
#include "util/splitmix.h"

namespace bosch {

namespace {

struct InputId {
  dev_t dev;
  ino_t ino;
  std::string path;
};
std::mutex g_inputs_mu;
std::vector<InputId> g_inputs;
std::atomic<bool> g_guard{false};

}  // namespace

void guard_inputs(bool on) { g_guard.store(on); }

void note_input(const std::string& path, const struct stat& st) {
  if (!g_guard.load()) return;
  std::lock_guard<std::mutex> lk(g_inputs_mu);
  for (const auto& i : g_inputs)
    if (i.dev == st.st_dev && i.ino == st.st_ino) return;
  g_inputs.push_back({st.st_dev, st.st_ino, path});
}

void check_output_path(const std::string& path, std::string_view flag) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return;  // nothing there yet (or unreachable: the write says why)
  {
    std::lock_guard<std::mutex> lk(g_inputs_mu);
    for (const auto& i : g_inputs)
      check(!(i.dev == st.st_dev && i.ino == st.st_ino), "{} '{}' is the input file '{}'; choose another path",
            flag, path, i.path);
  }
}

void check_output_file(const std::string& path, std::string_view flag) {
  check(!path.empty(), "{}: empty path", flag);
  check_output_path(path, flag);
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0)
    check(S_ISREG(st.st_mode), "{} '{}' exists and is not a regular file", flag, path);
  const std::string parent = std::filesystem::path(path).parent_path().string();
  const std::string dir = parent.empty() ? "." : parent;
  check(::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode), "{} '{}': the folder '{}' does not exist", flag,
        path, dir);
  check(::access(dir.c_str(), W_OK) == 0, "{} '{}': the folder '{}' is not writable", flag, path, dir);
}

void prepare_output_dir(const std::string& dir, std::string_view flag) {
  check(!dir.empty(), "{}: empty path", flag);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  check(!ec, "{} '{}': cannot create the folder: {}", flag, dir, ec.message());
  struct stat st{};
  check(::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode), "{} '{}' is not a folder", flag, dir);
  check(::access(dir.c_str(), W_OK) == 0, "{} '{}': the folder is not writable", flag, dir);
  check_output_path(dir, flag);
}

std::string fresh_name_tag() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return fmt::format("{}.{:x}", ::getpid(), splitmix64_mix(salt + counter.fetch_add(1)) & 0xffffffffffull);
}

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)) {
  check_output_path(path_);
  // O_EXCL | O_NOFOLLOW: a file or link planted at the temporary name is never written through;
  // the name changes until one is free.
  for (int attempt = 0; attempt < 64; ++attempt) {
    tmp_ = fmt::format("{}.tmp.{}", path_, fresh_name_tag());
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ >= 0 || errno != EEXIST) break;
  }
  if (fd_ < 0) fail("cannot write '{}': {}", tmp_, std::strerror(errno));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {  // not committed
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void AtomicFileWriter::write(std::string_view bytes) {
  check(fd_ >= 0, "cannot write '{}': already committed", tmp_);
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t w = ::write(fd_, bytes.data() + off, bytes.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("cannot write '{}': {}", tmp_, std::strerror(errno));
    }
    off += static_cast<size_t>(w);
  }
}

void AtomicFileWriter::commit() {
  check(fd_ >= 0, "cannot write '{}': already committed", tmp_);
  ::fsync(fd_);
  ::close(fd_);
  fd_ = -1;
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp_.c_str());
    fail("cannot rename '{}' to '{}': {}", tmp_, path_, std::strerror(e));
  }
}

void write_file_atomic(const std::string& path, std::string_view contents) {
  AtomicFileWriter w(path);
  w.write(contents);
  w.commit();
}

std::string read_file(const std::string& path, size_t max_bytes, std::string_view kind) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the file type is checked next.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail("cannot open '{}': {}", path, std::strerror(errno));
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("'{}' is not a regular file (a {} file is read whole)", path, kind);
  }
  const auto too_big = [&](uint64_t n) {
    ::close(fd);
    fail("'{}' is {} bytes; a {} file may be at most {} MiB", path, n, kind, max_bytes / kMiB);
  };
  if (static_cast<uint64_t>(st.st_size) > max_bytes) too_big(static_cast<uint64_t>(st.st_size));
  note_input(path, st);
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  for (;;) {  // to the end, which may come later than st_size said (a file still growing)
    if (got == out.size()) {
      if (out.size() >= max_bytes + 1) too_big(out.size());
      out.resize(std::min(max_bytes + 1, std::max<size_t>(out.size() * 2, 4096)));
    }
    const ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      fail("cannot read '{}': {}", path, std::strerror(e));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  if (got > max_bytes) fail("'{}' is over {} MiB; a {} file may be at most {} MiB", path, max_bytes / kMiB, kind,
                            max_bytes / kMiB);
  out.resize(got);
  return out;
}

}  // namespace bosch
