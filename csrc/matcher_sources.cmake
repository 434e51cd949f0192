# Sources of the byte-level automaton and matcher (issue: Matcher). Appended to gbnf_core.
set(GBNF_MATCHER_SOURCES
)
