#include "search/core/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/atomic_file.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/hash.h"

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

constexpr int kJournalVersion = 2;  // 2: every line carries "sum" (version 1 had none)

uint64_t fnv1a64(std::string_view s) { return fnv1a(kFnvOffset, s.data(), s.size()); }

// A line is the compact JSON object T with ,"sum":"<FNV-1a 64 of T, 16 hex digits>" inserted
// before T's closing brace, so the checksum covers the exact bytes written, not a re-dump.
std::string with_checksum(const std::string& t) {
  return fmt::format("{},\"sum\":\"{:016x}\"}}", t.substr(0, t.size() - 1), fnv1a64(t));
}

constexpr std::string_view kSumKey = ",\"sum\":\"";
constexpr size_t kSumTail = kSumKey.size() + 16 + 2;  // ,"sum":" + 16 hex + "}

// Checks the line's checksum; Error naming `where` when it is absent or wrong.
void verify_checksum(const std::string& line, const std::string& where) {
  const bool has = line.size() > kSumTail && line.compare(line.size() - kSumTail, kSumKey.size(), kSumKey) == 0 &&
                   line.compare(line.size() - 2, 2, "\"}") == 0;
  check(has, "{}: no checksum (\"sum\" must end the line); the line was edited or cut, or the journal "
             "was written by an older bosch (journal version 1); start a new search", where);
  const std::string t = line.substr(0, line.size() - kSumTail) + "}";
  const std::string sum = line.substr(line.size() - 18, 16);
  check(sum == fmt::format("{:016x}", fnv1a64(t)),
        "{}: checksum mismatch (the line was changed after it was written); start a new search or "
        "restore the journal", where);
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
  check_output_path(path, "--journal");  // truncating the model (or any input) would destroy it
  j.fd_ = open_append(path, /*truncate=*/true);
  j.write_line(with_checksum(nlohmann::json{{"bosch_journal", kJournalVersion}, {"config", config}}.dump()));
  return j;
}

Journal Journal::resume(const std::string& path, const nlohmann::json& config, size_t n_bits,
                        std::vector<JournalEntry>& entries, bool append) {
  const std::string text = read_file(path, kMaxJournalBytes, "journal");
  entries.clear();
  size_t pos = 0, complete_end = 0;
  int line_no = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;  // partial last line: the search was killed writing it
    const std::string line = text.substr(pos, nl - pos);
    ++line_no;
    const std::string where = fmt::format("journal {} line {}", path, line_no);
    const nlohmann::json j = parse_json_checked(line, where);
    check(j.is_object(), "{}: expected a JSON object", where);
    try {
      if (line_no == 1) {
        const auto version = j.value("bosch_journal", nlohmann::json());
        check(version.is_number_integer(), "{}: not a bosch search journal header", where);
        check(version != 1, "{}: journal version 1 (written by an older bosch, without checksums) "
                            "cannot be resumed; start a new search", where);
        check(version == kJournalVersion, "{}: journal version {} is not supported (this bosch "
              "writes version {})", where, describe_json(version), kJournalVersion);
      }
      verify_checksum(line, where);
      if (line_no == 1) {
        const auto diff = first_difference(j.at("config"), config, "");
        if (!diff.empty()) {
          std::string ptr = "/" + diff;
          for (auto& c : ptr) c = c == '.' ? '/' : c;
          const auto at = [&](const nlohmann::json& cfg) {
            const nlohmann::json::json_pointer jp(diff == "config" ? "" : ptr);
            return cfg.contains(jp) ? describe_json(cfg.at(jp)) : std::string("(absent)");
          };
          fail("{}: the journal was written with a different configuration (field '{}': journal "
               "has {}, this run has {}); resume with the same options",
               where, excerpt(diff), at(j.at("config")), at(config));
        }
      } else {
        JournalEntry e;
        const int64_t expected = static_cast<int64_t>(entries.size());
        e.index = json_int(j.at("i"), where, "i", expected, expected);
        e.stage = excerpt(j.at("stage").get<std::string>());
        e.bits = bits_from_string(j.at("mask").get<std::string>(), n_bits, where);
        e.score = {j.at("raw").get<double>(), j.at("exact").get<double>(),
                   j.at("logprob").get<double>(), {}};
        entries.push_back(std::move(e));
      }
    } catch (const nlohmann::json::exception& e) {
      fail("{}: missing or mistyped field ({})", where, json_error_text(e));
    }
    pos = nl + 1;
    complete_end = pos;
  }
  check(line_no >= 1, "journal {}: no complete header line; start a new search instead", path);
  if (!append) return {};
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
  write_line(with_checksum(j.dump()));
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
