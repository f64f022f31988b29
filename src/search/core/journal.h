// The evaluation journal: an append-only JSON-lines file, one line per evaluation, each line
// written with a single write() and fsync'd, so a killed search loses at most the line being
// written. Line 1 is a header holding the search configuration; a resumed search must present
// the same configuration. A partial last line (killed mid-write) is dropped on resume.
//   {"bosch_journal":2,"config":{...},"sum":"..."}
//   {"exact":0.5,"i":0,"logprob":-2.1,"mask":"0101...","raw":-1.25,"stage":"reference","sum":"..."}
// "sum" (last on every line) is the FNV-1a 64 checksum of the line without it; a line whose
// checksum is missing or wrong is an Error on resume (docs/search.md).
// Scores are written with round-trip precision, so a replayed score is bit-identical.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "search/core/objective.h"

namespace bosch::search {

struct JournalEntry {
  int64_t index = 0;
  std::string stage;
  HeadBits bits;
  MaskScore score;
};

std::string bits_to_string(const HeadBits& bits);  // "0110..."
// Throws Error naming `where` when s is not a string of n '0'/'1' characters.
HeadBits bits_from_string(const std::string& s, size_t n, const std::string& where);

class Journal {
 public:
  // Starts a new journal at `path` (replacing any file there) with this header config.
  static Journal create(const std::string& path, const nlohmann::json& config);
  // Reads an existing journal, checks its header against `config` (Error naming the first
  // differing field), drops a partial last line, and reopens it for appending; with
  // `append` false (MPI ranks other than 0) only reads it: the file is left alone.
  static Journal resume(const std::string& path, const nlohmann::json& config, size_t n_bits,
                        std::vector<JournalEntry>& entries, bool append = true);
  Journal() = default;
  Journal(Journal&& o) noexcept;
  Journal& operator=(Journal&& o) noexcept;
  ~Journal();

  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  void append(const JournalEntry& e);

 private:
  void write_line(const std::string& line);
  std::string path_;
  int fd_ = -1;
};

}  // namespace bosch::search
