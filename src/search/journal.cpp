#include "search/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/atomic_file.h"
#include "util/error.h"

namespace bosch::search {

std::string bits_to_string(const HeadBits& bits) {
  std::string s(bits.size(), '0');
  for (size_t i = 0; i < bits.size(); ++i) s[i] = bits[i] ? '1' : '0';
  return s;
}

HeadBits bits_from_string(const std::string& s, size_t n, const std::string& where) {
  check(s.size() == n, "{}: mask has {} bits, expected {} (one per layer and KV head)", where,
        s.size(), n);
  HeadBits b(n);
  for (size_t i = 0; i < n; ++i) {
    check(s[i] == '0' || s[i] == '1', "{}: mask character {} is '{}', expected '0' or '1'", where,
          i, s[i]);
    b[i] = s[i] == '1';
  }
  return b;
}

namespace {

int open_append(const std::string& path, bool truncate) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0),
                  0644);
  check(fd >= 0, "journal {}: cannot open for writing: {}", path, std::strerror(errno));
  return fd;
}

// Names the first field where two header configs differ ("" when equal).
std::string first_difference(const nlohmann::json& a, const nlohmann::json& b,
                             const std::string& prefix) {
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key())) return prefix + it.key();
      auto d = first_difference(it.value(), b.at(it.key()), prefix + it.key() + ".");
      if (!d.empty()) return d;
    }
    for (auto it = b.begin(); it != b.end(); ++it)
      if (!a.contains(it.key())) return prefix + it.key();
    return "";
  }
  return a == b ? "" : (prefix.empty() ? "config" : prefix.substr(0, prefix.size() - 1));
}

}  // namespace

Journal Journal::create(const std::string& path, const nlohmann::json& config) {
  Journal j;
  j.path_ = path;
  j.fd_ = open_append(path, /*truncate=*/true);
  j.write_line(nlohmann::json{{"bosch_journal", 1}, {"config", config}}.dump());
  return j;
}

Journal Journal::resume(const std::string& path, const nlohmann::json& config, size_t n_bits,
                        std::vector<JournalEntry>& entries) {
  const std::string text = read_file(path);
  entries.clear();
  size_t pos = 0, complete_end = 0;
  int line_no = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;  // partial last line: the search was killed writing it
    const std::string line = text.substr(pos, nl - pos);
    ++line_no;
    const std::string where = fmt::format("journal {} line {}", path, line_no);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      fail("{}: not valid JSON ({})", where, e.what());
    }
    try {
      if (line_no == 1) {
        check(j.value("bosch_journal", 0) == 1, "{}: not a bosch search journal header", where);
        const auto diff = first_difference(j.at("config"), config, "");
        if (!diff.empty()) {
          std::string ptr = "/" + diff;
          for (auto& c : ptr) c = c == '.' ? '/' : c;
          const auto at = [&](const nlohmann::json& cfg) {
            const nlohmann::json::json_pointer jp(diff == "config" ? "" : ptr);
            return cfg.contains(jp) ? cfg.at(jp).dump() : std::string("(absent)");
          };
          fail("{}: the journal was written with a different configuration (field '{}': journal "
               "has {}, this run has {}); resume with the same options",
               where, diff, at(j.at("config")), at(config));
        }
      } else {
        JournalEntry e;
        e.index = j.at("i").get<int64_t>();
        check(e.index == static_cast<int64_t>(entries.size()), "{}: field 'i' is {}, expected {}",
              where, e.index, entries.size());
        e.stage = j.at("stage").get<std::string>();
        e.bits = bits_from_string(j.at("mask").get<std::string>(), n_bits, where);
        e.score = {j.at("raw").get<double>(), j.at("exact").get<double>(),
                   j.at("logprob").get<double>(), {}};
        entries.push_back(std::move(e));
      }
    } catch (const nlohmann::json::exception& e) {
      fail("{}: missing or mistyped field ({})", where, e.what());
    }
    pos = nl + 1;
    complete_end = pos;
  }
  check(line_no >= 1, "journal {}: no complete header line; start a new search instead", path);
  if (complete_end < text.size())
    check(::truncate(path.c_str(), static_cast<off_t>(complete_end)) == 0,
          "journal {}: cannot drop the partial last line: {}", path, std::strerror(errno));
  Journal jn;
  jn.path_ = path;
  jn.fd_ = open_append(path, /*truncate=*/false);
  return jn;
}

Journal::Journal(Journal&& o) noexcept : path_(std::move(o.path_)), fd_(o.fd_) { o.fd_ = -1; }
Journal& Journal::operator=(Journal&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(o.path_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}
Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(const JournalEntry& e) {
  nlohmann::json j{{"i", e.index},          {"stage", e.stage},
                   {"mask", bits_to_string(e.bits)}, {"raw", e.score.value},
                   {"exact", e.score.exact_rate},    {"logprob", e.score.mean_logprob}};
  write_line(j.dump());
}

void Journal::write_line(const std::string& line) {
  const std::string s = line + "\n";
  size_t done = 0;
  while (done < s.size()) {
    ssize_t w = ::write(fd_, s.data() + done, s.size() - done);
    if (w < 0 && errno == EINTR) continue;
    check(w > 0, "journal {}: write failed: {}", path_, std::strerror(errno));
    done += static_cast<size_t>(w);
  }
  check(::fsync(fd_) == 0, "journal {}: fsync failed: {}", path_, std::strerror(errno));
}

}  // namespace bosch::search
