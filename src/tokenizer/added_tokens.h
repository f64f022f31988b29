// Added/special tokens written literally in the text ("<|im_start|>", "<s>") are found before
// any normalization or splitting: leftmost match first, the longest one at that position
// (as Hugging Face tokenizers and transformers.js do).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bosch {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool lstrip = false, rstrip = false;  // eat whitespace on that side of the match
  bool special = true;
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(const std::vector<AddedToken>& tokens);
  bool empty() const { return tokens_.empty(); }

  // One piece of the text: either plain text (id == -1) or a matched token.
  struct Segment {
    std::string_view text;
    int32_t id = -1;
  };
  std::vector<Segment> split(std::string_view text) const;

 private:
  struct Node {
    int32_t child_begin = 0, child_count = 0;  // children in edges_, sorted by byte
    int32_t token = -1;                         // index into tokens_ when a token ends here
  };
  struct Edge {
    uint8_t byte;
    int32_t node;
  };
  int32_t child(int32_t node, uint8_t b) const;

  std::vector<AddedToken> tokens_;
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  bool first_byte_[256] = {};
};

}  // namespace bosch
