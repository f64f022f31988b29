// GGUF: parse, model load, the GGUF tokenizers (SentencePiece "llama", byte-level "gpt2") and
// the bosch.swa.* mask metadata.
#include <algorithm>

#include "formats/gguf.h"
#include "fuzz_util.h"
#include "model/model.h"
#include "masks/gguf_mask.h"
#include "tokenizer/tokenizer.h"

using namespace bosch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_scratch("in.gguf", {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean([&] {
    GGUFFile f(path);
    fuzz::expect_clean([&] {
      auto tok = load_tokenizer_from_gguf(f);
      auto ids = tok->encode("Hello world, <s> 123 \xc3\xa9t\xc3\xa9!", true);
      for (int32_t id : ids) tok->token_bytes(id);
      tok->decode(ids);
    });
    fuzz::expect_clean([&] {  // mask metadata against the shape the file declares
      const std::string arch = f.get_string("general.architecture");
      ModelConfig c;
      c.n_layers = static_cast<int>(f.get_int_in(arch + ".block_count", 1, 256));
      c.n_kv_heads = static_cast<int>(f.get_int_in(arch + ".attention.head_count_kv", 1, 256));
      if (auto plan = plan_from_gguf_metadata(f, c)) plan->summary();
    });
  });
  fuzz::expect_clean([&] {
    auto m = Model::load(path);
    m->identity();
  });
  return 0;
}
