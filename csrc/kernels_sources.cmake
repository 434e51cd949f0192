# Sources of the bitmask kernels (CPU). Appended to gbnf_core.
set(GBNF_KERNELS_SOURCES
  csrc/kernels/bitmask.cc
  csrc/kernels/apply_bitmask_cpu.cc
)
