# Sources of the byte-level automaton and matcher (issue: Matcher). Appended to gbnf_core.
set(GBNF_MATCHER_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/automaton/utf8_ranges.cc
  ${CMAKE_CURRENT_LIST_DIR}/automaton/nfa_builder.cc
  ${CMAKE_CURRENT_LIST_DIR}/automaton/automaton.cc
  ${CMAKE_CURRENT_LIST_DIR}/automaton/liveness.cc
  ${CMAKE_CURRENT_LIST_DIR}/automaton/period_twins.cc
  ${CMAKE_CURRENT_LIST_DIR}/automaton/shifted_copies.cc
  ${CMAKE_CURRENT_LIST_DIR}/matcher/step_table.cc
  ${CMAKE_CURRENT_LIST_DIR}/matcher/gss.cc
  ${CMAKE_CURRENT_LIST_DIR}/matcher/json_canonical.cc
  ${CMAKE_CURRENT_LIST_DIR}/matcher/json_prefix.cc
  ${CMAKE_CURRENT_LIST_DIR}/matcher/distinct_items.cc
  ${CMAKE_CURRENT_LIST_DIR}/matcher/recognizer.cc
  ${CMAKE_CURRENT_LIST_DIR}/matcher/matcher.cc
  ${CMAKE_CURRENT_LIST_DIR}/matcher/growth_probe.cc
)
