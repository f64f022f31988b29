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

void write_file_atomic(const std::string& path, std::string_view contents) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail("cannot write '{}': {}", tmp, std::strerror(errno));
  size_t off = 0;
  while (off < contents.size()) {
    ssize_t w = ::write(fd, contents.data() + off, contents.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      fail("cannot write '{}': {}", tmp, std::strerror(e));
    }
    off += static_cast<size_t>(w);
  }
  ::fsync(fd);
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    fail("cannot rename '{}' to '{}': {}", tmp, path, std::strerror(e));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open '{}': {}", path, std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace bosch
