# Sources of the bitmask kernels (CPU). Appended to gbnf_core.
set(GBNF_KERNELS_SOURCES
)
