// Dense building blocks of a transformer layer, float32. Matrices are row-major.
#pragma once
#include <cstdint>

namespace bosch {

// y[m, n] = x[m, k] * w[n, k]^T (+ y if accumulate). w is a linear layer in PyTorch layout.
void matmul_nt(const float* x, const float* w, float* y, int m, int n, int k,
               bool accumulate = false);
// Plain triple loop of the same; for tests and benchmarks.
void matmul_nt_reference(const float* x, const float* w, float* y, int m, int n, int k);

// out[r, :] = x[r, :] / rms(x[r, :]) * weight, for `rows` rows of length `dim`.
void rmsnorm(const float* x, const float* weight, float* out, int rows, int dim, float eps);
// Rotate-half RoPE (Hugging Face convention) in place on `n_heads` heads of `head_dim` for
// `n_tok` tokens at positions pos0.., using inv_freq[head_dim/2]. Stride between tokens: stride.
void rope_rotate_half(float* x, int n_tok, int64_t pos0, int n_heads, int head_dim,
                      int64_t stride, const float* inv_freq);
// out[i] = silu(gate[i]) * up[i]
void swiglu(const float* gate, const float* up, float* out, int64_t n);
// Numerically stable in-place softmax; returns log-sum-exp.
double softmax_inplace(float* x, int n);
double log_sum_exp(const float* x, int n);

// float32 <-> fp16 (IEEE half) for n values, rounding to nearest even (the KV caches' fp16 mode;
// F16C where built, else formats/dtype.h's conversions, which round the same way).
void floats_to_halves(const float* x, uint16_t* out, int64_t n);
void halves_to_floats(const uint16_t* h, float* out, int64_t n);

}  // namespace bosch
