// Tokenizer interface. Implementations: SentencePiece-style BPE from GGUF ("llama" vocab), and
// byte-level BPE from a Hugging Face tokenizer.json or GGUF ("gpt2" vocab).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bosch {

class GGUFFile;
struct ModelFile;

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Encodes text. Special/added tokens written literally in `text` (e.g. "<|im_start|>") are
  // matched before splitting. add_bos: prepend BOS when the model's metadata asks for it.
  // Invalid UTF-8 is first replaced by U+FFFD, one per maximal invalid subpart (the WHATWG
  // TextDecoder rule), so ids equal what the Hugging Face/JavaScript reference gives for the
  // same bytes decoded that way. decode(encode(x)) == x for valid UTF-8 x (NFC x for Qwen).
  virtual std::vector<int32_t> encode(std::string_view text, bool add_bos = false) const = 0;
  // Raw bytes a token stands for (special tokens give their text). May be partial UTF-8.
  virtual std::string token_bytes(int32_t id) const = 0;
  virtual int vocab_size() const = 0;
  // Decodes a whole sequence (concatenated bytes, with the leading-space rule where it applies).
  // A BOS at the start is dropped; other special tokens give their text. The result may hold
  // invalid UTF-8 when the ids split a character (use StreamDecoder for printing).
  virtual std::string decode(const std::vector<int32_t>& ids) const;

  int32_t bos_id() const { return bos_id_; }   // -1 when the model has none
  int32_t eos_id() const { return eos_id_; }
  bool adds_bos() const { return add_bos_; }   // metadata says BOS is prepended
  bool is_eog(int32_t id) const;               // end-of-generation (EOS, <|im_end|>, <|eot_id|>)

  // Chat template: wraps a single user message into the model's instruct format when the
  // model file carries a chat template; otherwise returns the message unchanged.
  // The result does not include BOS: encode it with add_bos = true.
  bool has_chat_template() const { return !chat_template_.empty(); }
  std::string apply_chat_template(const std::string& user_message) const;
  const std::string& chat_template() const { return chat_template_; }
  // SentencePiece "llama" vocabularies: decoding drops the space the encoder put in front.
  bool strips_leading_space() const { return strip_leading_space_; }

 protected:
  int32_t bos_id_ = -1, eos_id_ = -1;
  bool add_bos_ = false;
  std::vector<int32_t> eog_ids_;
  std::string chat_template_;
  bool strip_leading_space_ = false;
};

// Chat template families we render without a Jinja engine.
enum class ChatFamily { None, ChatML, ChatMLQwen25System, Llama3, Llama31 };
ChatFamily detect_chat_family(const std::string& chat_template);

// Streaming decode: feed ids one by one, get back only complete UTF-8 (partial sequences are
// held until they complete; invalid bytes become U+FFFD).
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tok) : tok_(tok) {}
  std::string push(int32_t id);
  std::string flush();
 private:
  const Tokenizer& tok_;
  std::string pending_;
  bool first_ = true;
};

std::unique_ptr<Tokenizer> load_tokenizer_from_gguf(const GGUFFile& gguf);
// The tokenizer of a model file opened once (formats/model_source.h): the GGUF's vocabulary, or
// the Hugging Face directory's tokenizer.json.
std::unique_ptr<Tokenizer> load_tokenizer(const ModelFile& file);
// Reads a tokenizer.json; a tokenizer_config.json next to it (when present) gives
// bos/eos/add_bos_token/chat_template.
std::unique_ptr<Tokenizer> load_tokenizer_json(const std::string& tokenizer_json_path);
// MODEL is a .gguf file, a Hugging Face directory (reads tokenizer.json and
// tokenizer_config.json), or a tokenizer.json path.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& model_path);

}  // namespace bosch
