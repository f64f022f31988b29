// Outputs are written atomically: to a temporary file beside the target, fsynced, then renamed.
// A reader never sees a half-written mask, report or checkpoint.
#pragma once
#include <string>
#include <string_view>

namespace bosch {

void write_file_atomic(const std::string& path, std::string_view contents);

// The same for a file written in pieces (a model bigger than memory): commit() renames the
// temporary onto `path`; without it (an error part-way) the temporary is removed.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  void write(std::string_view bytes);
  void commit();

 private:
  std::string path_, tmp_;
  int fd_ = -1;
};
std::string read_file(const std::string& path);  // throws Error naming the path

}  // namespace bosch
