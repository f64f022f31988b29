// The instruction set a translation unit is compiled for. Kernel code that is compiled once per
// instruction set (isa_avx2.cpp, isa_avx512.cpp: see dispatch.h) lives in the inline namespace
// bosch::kernels::BOSCH_ISA, so each build of an inline helper has its own symbol: the linker
// can never hand an AVX-512 copy of a helper to baseline code (or the reverse). Every other
// file gets `base` (the build's own target, x86-64-v3 by default).
#pragma once

#ifndef BOSCH_ISA
#define BOSCH_ISA base
#endif
