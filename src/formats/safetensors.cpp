#include "formats/safetensors.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>

#include "util/atomic_file.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch {

namespace fs = std::filesystem;

namespace {

// The reference implementation refuses headers above 100 MB; so do we (before parsing).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

std::optional<DType> dtype_from_name(const std::string& s) {
  if (s == "F32") return DType::F32;
  if (s == "F16") return DType::F16;
  if (s == "BF16") return DType::BF16;
  return std::nullopt;
}

nlohmann::json parse_json(const std::string& path, const char* begin, const char* end,
                          const char* what) {
  return parse_json_checked(std::string_view(begin, static_cast<size_t>(end - begin)),
                            fmt::format("'{}': {}", path, what));
}

}  // namespace

int64_t SafeTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

SafetensorsFile::SafetensorsFile(const std::string& path, FileHold hold) : path_(path) {
  file_ = std::make_unique<FileBytes>(path, hold);
  const uint8_t* base = file_->data();
  const uint64_t size = file_->size();
  check(size >= 8, "safetensors '{}': header length: file has {} bytes (need at least 8)", path,
        size);
  uint64_t header_len;
  std::memcpy(&header_len, base, 8);
  check(header_len <= size - 8,
        "safetensors '{}': header length: {} bytes, but only {} bytes follow it in the file", path,
        header_len, size - 8);
  check(header_len <= kMaxHeaderBytes, "safetensors '{}': header length: {} bytes exceeds {}",
        path, header_len, kMaxHeaderBytes);
  const char* hb = reinterpret_cast<const char*>(base + 8);
  nlohmann::json header = parse_json(path, hb, hb + header_len, "safetensors header");
  check(header.is_object(), "safetensors '{}': header: expected a JSON object, found {}", path,
        header.type_name());

  const uint64_t data_start = 8 + header_len;
  const uint64_t data_size = size - data_start;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      check(entry.is_object(), "safetensors '{}': __metadata__: expected an object, found {}",
            path, entry.type_name());
      for (const auto& [k, v] : entry.items()) {
        check(v.is_string(), "safetensors '{}': __metadata__ '{}': expected a string, found {}",
              path, excerpt(k), v.type_name());
      }
      metadata_ = entry;
      continue;
    }
    check(entry.is_object(), "safetensors '{}': tensor '{}': expected an object, found {}", path,
          excerpt(name), entry.type_name());
    SafeTensor t;
    t.name = name;
    const std::string name_x = excerpt(name);  // names in messages: a short excerpt
    t.file = path;

    auto dt = entry.find("dtype");
    check(dt != entry.end() && dt->is_string(),
          "safetensors '{}': tensor '{}' dtype: missing or not a string", path, name_x);
    std::string dtype = dt->get<std::string>();
    std::optional<DType> type = dtype_from_name(dtype);
    check(type.has_value(),
          "safetensors '{}': tensor '{}' dtype: {} is not supported (supported: F32, F16, BF16)",
          path, name_x, excerpt(dtype));
    t.type = *type;

    auto sh = entry.find("shape");
    check(sh != entry.end() && sh->is_array(),
          "safetensors '{}': tensor '{}' shape: missing or not an array", path, name_x);
    int64_t numel = 1;
    for (const auto& d : *sh) {
      check(d.is_number_unsigned() && d.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX),
            "safetensors '{}': tensor '{}' shape: {} is not a non-negative integer", path, name_x,
            describe_json(d));
      int64_t v = d.get<int64_t>();
      t.shape.push_back(v);
      check(!__builtin_mul_overflow(numel, v, &numel),
            "safetensors '{}': tensor '{}' shape: element count overflows", path, name_x);
    }
    check(static_cast<uint64_t>(numel) <= std::numeric_limits<uint64_t>::max() / 4,
          "safetensors '{}': tensor '{}' shape: {} elements is too large", path, name_x, numel);
    t.nbytes = dtype_bytes(t.type, static_cast<size_t>(numel));

    auto off = entry.find("data_offsets");
    check(off != entry.end() && off->is_array() && off->size() == 2 &&
              (*off)[0].is_number_unsigned() && (*off)[1].is_number_unsigned(),
          "safetensors '{}': tensor '{}' data_offsets: expected [begin, end] (non-negative integers)",
          path, name_x);
    uint64_t begin = (*off)[0].get<uint64_t>();
    uint64_t end = (*off)[1].get<uint64_t>();
    check(begin <= end, "safetensors '{}': tensor '{}' data_offsets: begin {} > end {}", path, name_x,
          begin, end);
    check(end - begin == t.nbytes,
          "safetensors '{}': tensor '{}' data_offsets: [{}, {}) holds {} bytes, but shape {} of {} "
          "needs {}",
          path, name_x, begin, end, end - begin, describe_json(*sh), excerpt(dtype), t.nbytes);
    check(end <= data_size,
          "safetensors '{}': tensor '{}' data_offsets: end {} lies beyond the {}-byte data section "
          "(file truncated?)",
          path, name_x, end, data_size);
    t.data = base + data_start + begin;
    tensors_.push_back(std::move(t));
  }

  // Byte ranges must not overlap (empty tensors occupy nothing).
  std::vector<const SafeTensor*> order;
  for (const SafeTensor& t : tensors_) order.push_back(&t);
  std::sort(order.begin(), order.end(),
            [](const SafeTensor* a, const SafeTensor* b) { return a->data < b->data; });
  const SafeTensor* prev = nullptr;
  for (const SafeTensor* t : order) {
    if (t->nbytes == 0) continue;
    if (prev) {
      check(prev->data + prev->nbytes <= t->data,
            "safetensors '{}': tensor '{}' data_offsets: overlaps tensor '{}'", path,
            excerpt(t->name), excerpt(prev->name));
    }
    prev = t;
  }
}

HFModelDir::HFModelDir(const std::string& dir, FileHold hold) : dir_(dir) {
  fs::path root(dir);
  check(fs::is_directory(root), "'{}' is not a directory (expected a Hugging Face model dir)", dir);
  fs::path config_path = root / "config.json";
  check(fs::is_regular_file(config_path), "'{}': config.json is missing", dir);
  std::string config_text = read_file(config_path.string(), kMaxConfigBytes, "config.json");
  config_ = parse_json(config_path.string(), config_text.data(),
                       config_text.data() + config_text.size(), "config");
  check(config_.is_object(), "'{}': expected a JSON object, found {}", config_path.string(),
        config_.type_name());

  fs::path index_path = root / "model.safetensors.index.json";
  fs::path single_path = root / "model.safetensors";
  if (fs::exists(index_path)) {
    std::string text = read_file(index_path.string(), kMaxConfigBytes, "safetensors index");
    nlohmann::json index =
        parse_json(index_path.string(), text.data(), text.data() + text.size(), "index");
    auto wm = index.is_object() ? index.find("weight_map") : index.end();
    check(index.is_object() && wm != index.end() && wm->is_object(),
          "'{}': weight_map: missing or not an object", index_path.string());
    // shard file -> its tensors by name (a linear search per entry would be quadratic).
    std::map<std::string, std::map<std::string, const SafeTensor*>> shards;
    for (const auto& [name, shard] : wm->items()) {
      check(shard.is_string(), "'{}': weight_map '{}': expected a shard file name, found {}",
            index_path.string(), excerpt(name), describe_json(shard));
      std::string shard_name = shard.get<std::string>();
      check(!shard_name.empty() && shard_name.find('/') == std::string::npos &&
                shard_name != "." && shard_name != "..",
            "'{}': weight_map '{}': '{}' is not a plain file name", index_path.string(),
            excerpt(name), excerpt(shard_name));
      auto it = shards.find(shard_name);
      if (it == shards.end()) {
        fs::path shard_path = root / shard_name;
        check(fs::is_regular_file(shard_path),
              "'{}': weight_map '{}': shard '{}' is missing", index_path.string(), excerpt(name),
              shard_path.string());
        files_.push_back(std::make_unique<SafetensorsFile>(shard_path.string(), hold));
        it = shards.emplace(shard_name, std::map<std::string, const SafeTensor*>()).first;
        for (const SafeTensor& t : files_.back()->tensors()) it->second.emplace(t.name, &t);
      }
      auto found = it->second.find(name);
      check(found != it->second.end(), "'{}': weight_map '{}': tensor not found in shard '{}'",
            index_path.string(), excerpt(name), (root / shard_name).string());
      index_[name] = found->second;
    }
  } else {
    check(fs::exists(single_path), "'{}': neither model.safetensors nor "
          "model.safetensors.index.json exists", dir);
    files_.push_back(std::make_unique<SafetensorsFile>(single_path.string(), hold));
    for (const SafeTensor& t : files_.back()->tensors()) index_[t.name] = &t;
  }
}

const SafeTensor* HFModelDir::find_tensor(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second;
}

const SafeTensor& HFModelDir::tensor(const std::string& name) const {
  const SafeTensor* t = find_tensor(name);
  check(t != nullptr, "'{}': tensor '{}' is missing", dir_, excerpt(name));
  return *t;
}

std::vector<std::string> HFModelDir::tensor_names() const {
  std::vector<std::string> names;
  names.reserve(index_.size());
  for (const auto& [name, t] : index_) names.push_back(name);
  return names;
}

bool is_hf_model_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_regular_file(fs::path(path) / "config.json", ec);
}

}  // namespace bosch
