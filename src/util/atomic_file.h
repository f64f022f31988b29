// The one path for the user's files (issue #40).
// Inputs: regular files only (a FIFO, device or directory is refused before anything is read),
// each kind with a size bound stated in the error; every input opened is remembered by device
// and inode, so no output can be the same file as an input, whatever path names it.
// Outputs are written atomically: to a temporary file beside the target, created exclusively
// and without following links, fsynced, then renamed. A reader never sees a half-written mask,
// report or checkpoint.
#pragma once
#include <sys/stat.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace bosch {

void write_file_atomic(const std::string& path, std::string_view contents);

// "PID.TAG" with TAG unpredictable and new at each call: the name part of a temporary, which is
// then created exclusively (O_EXCL or mkdir), drawing another while the name is taken.
std::string fresh_name_tag();

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
// Size bounds per kind of input (far above any real file of the kind: a 150K-vocabulary
// tokenizer.json is about 10 MB, a LongBench task file under 100 MB).
constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kMaxConfigBytes = 16 * kMiB;     // config.json, tokenizer_config.json, indexes
constexpr size_t kMaxMaskBytes = 64 * kMiB;       // mask JSON, DuoAttention patterns
constexpr size_t kMaxTokenizerBytes = 512 * kMiB;  // tokenizer.json
constexpr size_t kMaxTextBytes = 1024 * kMiB;     // haystacks, text objectives, datasets, stdin
constexpr size_t kMaxJournalBytes = 4096 * kMiB;  // search journals

// The whole file; Error naming the path when it is not a regular file, cannot be read or holds
// more than max_bytes ("a <kind> file may be at most N MiB").
std::string read_file(const std::string& path, size_t max_bytes = kMaxTextBytes, std::string_view kind = "input");
// Records an opened input (FileBytes and read_file call it) once guard_inputs(true) was called:
// the CLI turns the guard on for the whole process; library users and tests that read a file and
// then write it back (round trips) leave it off.
void guard_inputs(bool on);
void note_input(const std::string& path, const struct stat& st);
// Error when `path` exists and is the same file (device and inode) as an input this process
// has opened, or when it is not a regular file where one will be written. `flag` names the
// option in the message.
void check_output_path(const std::string& path, std::string_view flag = "output");
// Before long work starts: check_output_path, and the folder the file goes into exists and is
// writable. Error naming the flag and the path.
void check_output_file(const std::string& path, std::string_view flag);
// Before long work starts: creates the output folder (and its parents) and checks it is a
// writable folder that holds no input.
void prepare_output_dir(const std::string& dir, std::string_view flag);

}  // namespace bosch
