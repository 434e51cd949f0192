# Sources of the vocabulary and token trie. Appended to gbnf_core.
set(GBNF_VOCAB_SOURCES
)
