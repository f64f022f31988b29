#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "util/error.h"

namespace bosch {

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)) {
  tmp_ = path_ + ".tmp." + std::to_string(::getpid());
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
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

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open '{}': {}", path, std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace bosch
