#include "kernels/qdot.h"

#include <vector>

#include "kernels/dispatch.h"
#include "util/error.h"

namespace bosch {

void qdot_bad_type(DType t) { fail("dot_row: {} is not a block type", dtype_name(t)); }

float dot_row(DType t, const void* row, const float* x, int64_t k) {
  return kernels::active_kernels().dot_row(t, static_cast<const uint8_t*>(row), x, k);  // qdot_kernels.h
}

double dot_row_reference(DType t, const void* row, const float* x, int64_t k) {
  std::vector<float> w(static_cast<size_t>(k));
  dequant_blocks(t, row, w.data(), static_cast<size_t>(k) / dtype_block(t));
  double s = 0;
  for (int64_t i = 0; i < k; ++i) s += static_cast<double>(w[i]) * x[i];
  return s;
}

}  // namespace bosch
