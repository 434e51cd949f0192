# Sources of the vocabulary and token trie. Appended to gbnf_core.
set(GBNF_VOCAB_SOURCES
  csrc/vocab/vocab.cc
  csrc/vocab/fingerprint.cc
  csrc/vocab/token_trie.cc
  csrc/vocab/class_runs.cc
  csrc/vocab/trie_walk.cc
  csrc/vocab/llama_extract.cc
)
