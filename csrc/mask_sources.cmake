# Sources of the token-mask engine (compiled grammar, mask cache, token-level matcher). Appended
# to gbnf_core.
set(GBNF_MASK_SOURCES
  csrc/mask/token_set.cc
  csrc/mask/trie_bytes.cc
  csrc/mask/prefix_walker.cc
  csrc/mask/trie_walks.cc
  csrc/mask/state_mask.cc
  csrc/mask/mask_cache.cc
  csrc/mask/compiled_grammar.cc
  csrc/mask/token_matcher.cc
  csrc/mask/thread_pool.cc
  csrc/mask/batch.cc
)
