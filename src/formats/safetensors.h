// Hugging Face model directory: config.json + model.safetensors, or shards listed in
// model.safetensors.index.json. Tensors are mmapped; dtypes F32, F16, BF16.
// Offsets, shapes and sizes are checked against each file; errors name the file and tensor.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/dtype.h"
#include "util/file_bytes.h"

namespace bosch {

struct SafeTensor {
  std::string name;
  std::vector<int64_t> shape;      // row-major, shape[0] slowest (PyTorch order)
  DType type = DType::F32;
  const uint8_t* data = nullptr;
  size_t nbytes = 0;
  std::string file;                // which shard
  int64_t numel() const;
};

// One .safetensors file.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path, FileHold hold = FileHold::Map);
  const std::string& path() const { return path_; }
  const std::vector<SafeTensor>& tensors() const { return tensors_; }
  const nlohmann::json& metadata() const { return metadata_; }  // "__metadata__" or null
 private:
  std::string path_;
  std::unique_ptr<FileBytes> file_;
  std::vector<SafeTensor> tensors_;
  nlohmann::json metadata_;
};

// A Hugging Face model directory (config.json and weights; tokenizer.json is read elsewhere).
class HFModelDir {
 public:
  explicit HFModelDir(const std::string& dir, FileHold hold = FileHold::Map);  // hold: of every shard
  const std::string& dir() const { return dir_; }
  const nlohmann::json& config() const { return config_; }
  bool has_tensor(const std::string& name) const { return index_.count(name) != 0; }
  const SafeTensor* find_tensor(const std::string& name) const;
  const SafeTensor& tensor(const std::string& name) const;  // throws naming dir and tensor
  std::vector<std::string> tensor_names() const;

 private:
  std::string dir_;
  nlohmann::json config_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const SafeTensor*> index_;
};

// True when `path` is a directory holding config.json (a Hugging Face model).
bool is_hf_model_dir(const std::string& path);

}  // namespace bosch
