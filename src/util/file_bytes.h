// A whole file's bytes in memory, read-only; model weights are never copied just to be read,
// but they may be read once into memory that streams faster than the page cache's mapping.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bosch {

// How a file's bytes are held.
//  Map:  mmap of the file. Nothing is read until touched, and processes on one machine share the
//        page cache (several MPI ranks hold one copy). 4 KiB pages.
//  Copy: read once into anonymous memory advised to use 2 MiB transparent huge pages. One decode
//        step streams every weight once; on this project's VM an 8B model decoded at 0.42-0.47 of
//        the memory bandwidth from the mapping and 0.65-0.76 from huge pages (README, Measurements).
enum class FileHold { Map, Copy };

// /proc/meminfo's MemAvailable (what can be had without swapping, page cache included), 0 if unknown.
size_t mem_available_bytes();

// The hold for model weights: Copy when the kernel offers transparent huge pages
// (/sys/kernel/mm/transparent_hugepage/enabled is "always" or "madvise") and this is one process;
// Map under MPI with several ranks (ranks on one machine share one page cache; a search is
// prefill, where the hold matters little) or without huge pages. BOSCH_MMAP=1 forces Map,
// BOSCH_MMAP=0 Copy. Metadata readers (tokenizer, mask checks) always Map: they touch a few pages.
FileHold weights_file_hold();

class FileBytes {
 public:
  // Throws Error naming the path (missing, not a regular file, unreadable, short read). Copy
  // falls back to Map, with a note on stderr, when the file would not leave 1/16 of
  // MemAvailable free (a copy cannot be paged out; the process would be killed instead).
  explicit FileBytes(const std::string& path, FileHold hold = FileHold::Map);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  FileHold hold() const { return hold_; }

 private:
  std::string path_;
  FileHold hold_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* region_ = nullptr;  // what munmap releases (Copy: the aligned buffer's whole reservation)
  size_t region_size_ = 0;
};

// Where the bytes at `ptrs` live, from /proc/self/smaps: the resident bytes of every mapping that
// holds at least one of them, split into file-backed and anonymous, and how many of those bytes
// sit in huge pages (AnonHugePages + FilePmdMapped). Zeros where /proc is not readable.
struct PageReport {
  size_t file_backed = 0, anonymous = 0, huge = 0;
};
PageReport page_report(std::vector<const void*> ptrs);
// "copied: 4.68 GiB resident, 4.67 GiB of it in huge pages" (or "mapped: ..."), for the reports.
std::string page_report_text(const PageReport& r);

}  // namespace bosch
