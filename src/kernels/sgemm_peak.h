// The machine's measured single-precision GEMM throughput (OpenBLAS, all its threads): the
// ceiling against which the model's achieved prefill GFLOP/s is judged.
#pragma once

namespace bosch {

// Best GFLOP/s of cblas_sgemm on square matrices of 1024 .. max_size (step 512), best of
// `repeats` runs each. Takes about a second at the defaults on 2 cores.
double measure_sgemm_gflops(int max_size = 2048, int repeats = 3);

}  // namespace bosch
