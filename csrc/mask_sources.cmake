# Sources of the token-mask engine (compiled grammar, mask cache, token-level matcher). Appended
# to gbnf_core.
set(GBNF_MASK_SOURCES
  csrc/mask/token_set.cc
  csrc/mask/prefix_walker.cc
  csrc/mask/config_walker.cc
  csrc/mask/loop_bytes.cc
  csrc/mask/loop_walk.cc
  csrc/mask/tail_walk.cc
  csrc/mask/trie_walks.cc
  csrc/mask/state_mask.cc
  csrc/mask/state_key.cc
  csrc/mask/classify_job.cc
  csrc/mask/shared_cache.cc
  csrc/mask/background.cc
  csrc/mask/precompute_order.cc
  csrc/mask/cache_core.cc
  csrc/mask/mask_cache.cc
  csrc/mask/mask_file.cc
  csrc/mask/compiled_grammar.cc
  csrc/mask/token_matcher.cc
  csrc/mask/fill_ahead.cc
  csrc/mask/thread_pool.cc
  csrc/mask/batch.cc
  csrc/mask/whitespace_filter.cc
  csrc/mask/draft_plan.cc
)
