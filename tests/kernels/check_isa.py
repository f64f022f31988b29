#!/usr/bin/env python3
"""The default build targets x86-64-v3 and only the dispatched AVX-512 kernel set
(src/kernels/isa_avx512.cpp, namespace bosch::kernels::avx512) may contain AVX-512
instructions: otherwise the binary would crash on an AVX2-only CPU. Disassembles the binary
and names every other function that uses zmm registers, opmask registers, the upper 16 vector
registers or an EVEX-only instruction, and any AVX-512 code in the code that builds a kernel
table (it runs before the CPU's features are known). Usage: check_isa.py BINARY NATIVE(ON/OFF); exit 77 =
skipped (a -march=native build, or no objdump)."""
import re
import shutil
import subprocess
import sys

binary, native = sys.argv[1], sys.argv[2]
if native.upper() in ("ON", "1", "TRUE"):
    print("SKIPPED: BOSCH_NATIVE build (everything targets the build machine)")
    sys.exit(77)
if not shutil.which("objdump"):
    print("SKIPPED: objdump not found")
    sys.exit(77)

avx512 = re.compile(r"%zmm|%k[1-7]\b|%[xy]mm(1[6-9]|2[0-9]|3[01])\b|"
                    r"\b(vpternlog|vpermt2|vpermi2|vpcmp[a-z]*\s.*%k|vcompress|vexpand|vpmov[a-z]*2m|"
                    r"vpmovm2|vrndscale|vgetexp|vgetmant|vscalef|vfixupimm|vrange|vreduce|vpro[lr]|"
                    r"vcvtne2ps2bf16|vcvtneps2bf16|vdpbf16ps|vpdpbusd|vpdpwssd|valign[dq]|vpconflict|vplzcnt)")
bf16 = re.compile(r"\b(vcvtne2ps2bf16|vcvtneps2bf16|vdpbf16ps)\b")
# dispatch.h: dot_row_bf16x (decode), round_x_bf16 and gemm_rows_bf16 (gemm_bf16_kernels.h, prefill)
BF16_KERNELS = ("dot_row_bf16x", "round_x_to_bf16", "round_to_bf16", "panel_to_bf16", "gemm_rows_bf16_kernel",
                "gemm_micro_bf16")
func = re.compile(r"^[0-9a-f]+ <(.*)>:$")
out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", binary], check=True,
                     capture_output=True, text=True).stdout
name, bad, allowed_zmm = "?", {}, 0
for line in out.splitlines():
    m = func.match(line)
    if m:
        name = m.group(1)
        continue
    if "\t" not in line or not avx512.search(line):
        continue
    # The set's table is looked at before dispatch knows the CPU: it must hold no AVX-512 code.
    # AVX512_BF16 is beyond x86-64-v4: only the kernels that bf16_x_dot() and bf16_prefill()
    # hand out (after they have checked the CPU) may hold it.
    if bf16.search(line) and not ("::avx512::" in name and any(k in name for k in BF16_KERNELS)):
        bad.setdefault(name, line.strip())
    elif "::avx512::" in name and "kernel_set" not in name:
        allowed_zmm += "%zmm" in line
    else:
        bad.setdefault(name, line.strip())
for n, insn in list(bad.items())[:20]:
    print(f"AVX-512 outside the dispatched set: {n}\n    {insn}")
print(f"{allowed_zmm} zmm instructions inside bosch::kernels::avx512, {len(bad)} functions outside it")
if bad:
    sys.exit(1)
if allowed_zmm == 0:
    print("the AVX-512 kernel set has no zmm instruction: was isa_avx512.cpp compiled for x86-64-v4?")
    sys.exit(1)
