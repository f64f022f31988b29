// The one table of tensor names (model/tensor_names.h): names as llama.cpp and Hugging Face
// write them, distinct per layer, and a clear error for a weight a format does not have.
#include <gtest/gtest.h>

#include <set>

#include "model/tensor_names.h"
#include "util/error.h"

using namespace bosch;

TEST(TensorNames, BothFormatsAsTheirToolsWriteThem) {
  EXPECT_EQ(tensor_name(TensorFormat::gguf, Weight::tok_embd), "token_embd.weight");
  EXPECT_EQ(tensor_name(TensorFormat::hf, Weight::lm_head), "lm_head.weight");
  EXPECT_EQ(tensor_name(TensorFormat::gguf, Weight::wo, 3), "blk.3.attn_output.weight");
  EXPECT_EQ(tensor_name(TensorFormat::hf, Weight::ffn_norm, 0), "model.layers.0.post_attention_layernorm.weight");
  EXPECT_EQ(tensor_name(TensorFormat::gguf, Weight::down_exps, 2), "blk.2.ffn_down_exps.weight");
  EXPECT_EQ(tensor_name(TensorFormat::hf, Weight::expert_up, 1, 7), "model.layers.1.mlp.experts.7.up_proj.weight");
}

TEST(TensorNames, DistinctAndRefusedWhereAFormatHasNone) {
  for (auto f : {TensorFormat::gguf, TensorFormat::hf}) {
    std::set<std::string> seen;
    for (int w = 0; w <= static_cast<int>(Weight::expert_down); ++w) {
      try {
        EXPECT_TRUE(seen.insert(tensor_name(f, static_cast<Weight>(w), 1, 0)).second) << w;
      } catch (const Error&) {
      }
    }
    EXPECT_GE(seen.size(), 20u);
  }
  EXPECT_THROW(tensor_name(TensorFormat::hf, Weight::rope_freqs), Error);
  EXPECT_THROW(tensor_name(TensorFormat::gguf, Weight::expert_gate, 0, 0), Error);
  EXPECT_THROW(tensor_name(TensorFormat::gguf, Weight::wq), Error);  // a layer's weight needs the layer
}
