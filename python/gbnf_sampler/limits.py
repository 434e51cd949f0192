"""Every resource limit of gbnf-sampler, named once.

Hitting a limit is a clear error, never a hang or a crash: :class:`GrammarError` with a ``code``
for the grammar front end, :class:`GrammarTooComplexError` with ``.limit`` for the matcher,
:class:`SchemaError` with ``.path`` for the JSON Schema and regex converters. :data:`LIMITS`
describes each one (what it bounds, its default, how to change it); the README's table is
generated from it (:func:`markdown_table`, checked by ``tests/test_limits.py``).

Some limits are options (a ``GrammarLimits`` field, a ``compile()`` argument); the others are
fixed bounds of an analysis that keep its cost predictable.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from . import _core

_CORE_DEFAULTS = _core.GrammarLimits()

# Matcher (per compiled grammar; options of gs.compile and of the byte-level gs.Matcher).
DEFAULT_MAX_STATE_SIZE = 100_000
DEFAULT_MAX_ROLLBACK = 256
DEFAULT_MAX_HISTORY_BYTES = 16 << 20
# Matcher.rule_stacks / explain: stacks reported.
MAX_RULE_STACKS = 16
# Automaton builder.
MAX_AUTOMATON_SIZE = 16 << 20
MAX_AUTOMATON_NESTING = 1000
# Compiled-grammar cache (gs.compiled.set_cache_limit_bytes changes the budget). The same budget
# bounds the shared mask cache and stops background precompute.
DEFAULT_CACHE_LIMIT_BYTES = 256 << 20
MAX_CACHE_ENTRIES = 128
# Mask cache (fixed bounds of csrc/mask/, read from the extension).
_MASK = _core.MASK_LIMITS
MAX_SHARED_KEY_STATES: int = _MASK["max_key_states"]
MAX_WALK_CONFIGS: int = _MASK["max_walk_configs"]
MAX_CLASSIFY_CHUNKS: int = _MASK["max_classify_chunks"]
# How long a fill waits for the mask a worker is filling ahead (prefetch) before it fills its own.
FILL_AHEAD_PATIENCE_US: int = _MASK["fill_ahead_patience_us"]
# Byte classes (loops of 32+ ASCII bytes with the space: string bodies, comments) whose tokens a
# vocabulary's trie lists for the classification walk; further classes are walked without one.
MAX_CLASS_RUNS: int = _MASK["max_class_runs"]
MASK_FILE_VERSION: int = _MASK["mask_file_version"]
# Serving-engine adapters (gbnf_sampler.engines): request specs -> converted grammars, per engine.
ENGINE_GRAMMAR_CACHE_ENTRIES = 256
# Compile threads of one engine adapter (at most; fewer on a smaller machine).
ENGINE_COMPILE_THREADS = 8
# Milliseconds an engine adapter's compile spends classifying a new grammar's states (its first
# masks), on the compile thread, before it returns.
ENGINE_PRECOMPUTE_MS = 50
# JSON Schema converter.
MAX_SCHEMA_DEPTH = 128
MAX_SCHEMA_NESTING = 200
MAX_REF_CHAIN = 30
MAX_SCHEMA_LOGIC_DEPTH = 24
MAX_SCHEMA_KIND_DEPTH = 12
MAX_NEGATION_DEPTH = 8
MAX_DEPENDENCIES = 6
MAX_OVERLAP_PROOF_DEPTH = 4
MAX_ONEOF_BRANCHES = 200
# A negated oneOf is "none, or two at once": its options grow as the pairs of branches.
MAX_NEGATED_ONEOF_BRANCHES = 8
MAX_ANYOF_BRANCHES = 256
# Pairs of a merged anyOf product checked for emptiness (schema.branch_pairs); a larger product
# counts as over MAX_ANYOF_BRANCHES without being read.
MAX_ANYOF_PAIRS_READ = 4096
MAX_PATTERN_GROUPS = 4
MAX_UNIQUE_STATES = 1024
MAX_UNIQUE_DOMAIN = 64
MAX_ANY_ORDER_STATES = 4096
MAX_CONTAINS_STATES = 1024
MAX_MULTIPLE_OF_STATES = 1000
MAX_ENUMERATED_MULTIPLES = 256
# max_whitespace, two bounds with one name: schema_to_gbnf(max_whitespace=...) bounds the spaces
# and tabs the flexible layout allows around one separator (a grammar shape); compile(...,
# max_whitespace=N) / Matcher(grammar, max_whitespace=N) bound every run of whitespace bytes in
# the output at run time (off for GBNF; for JSON Schema grammars DEFAULT_JSON_MAX_WHITESPACE,
# raised to what the layout itself writes: see gbnf_sampler.schema.layout_whitespace_run).
DEFAULT_MAX_WHITESPACE = 32
DEFAULT_JSON_MAX_WHITESPACE = 64
MAX_INDENT_DEPTH = 32
# Grammar doctor (gbnf_sampler.doctor): bounds that keep each check's cost predictable.
DOCTOR_MAX_ABLATIONS = 24
DOCTOR_MEASURE_STATE_SIZE = 20_000
DOCTOR_MAX_INLINE_DEPTH = 8
DOCTOR_MAX_NFA_STATES = 4000
DOCTOR_MAX_LITERAL_CHECKS = 4096
DOCTOR_MAX_PAIRWISE = 256
DOCTOR_MAX_CLASS_CHECK = 64
DOCTOR_RECURSION_LIMIT = 3000
# Regex converter.
MAX_GROUP_DEPTH = 64
MAX_REPEAT = 1_000_000
# Copies of a repetition around a lookahead that lookaround's algebra unrolls; longer or
# unbounded repetitions go through the marker automata of regex.assertions instead.
MAX_LOOKAHEAD_UNROLL = 64
MAX_DFA_STATES = 20_000
MAX_NFA_STATES = 50_000
# Structural layer (triggered grammars, structural tags).
MAX_TRIGGERS = 256
MAX_STRUCTURAL_TAG_DEPTH = 64
# Server (gbnf-sampler serve; the options are command-line flags).
SERVE_MAX_BODY_BYTES = 8 << 20
SERVE_MAX_GRAMMAR_BYTES = 1 << 20
SERVE_DEFAULT_PARALLEL = 4
SERVE_DEFAULT_QUEUE = 64
SERVE_DEFAULT_CTX = 4096
SERVE_PREFILL_CHUNK = 512
SERVE_MAX_CHOICES = 16  # a request's n: each choice takes a place of --parallel + --queue
# Jump-forward on llama.cpp: draft tokens evaluated in one batch with a sampled token. 6 keeps
# the batch at 7 tokens, the most that llama.cpp's CPU kernels compute exactly as one token at a
# time (flash attention on, weights not repacked; measured on llama-cpp-python 0.3.36).
DEFAULT_MAX_DRAFT_TOKENS = 6


@dataclass(frozen=True)
class GrammarLimits:
    """Limits applied while parsing a grammar. Hitting one raises :class:`GrammarError` whose
    ``code`` names it (``text_too_large``, ``too_many_rules``, ``nesting_too_deep``,
    ``repetition_too_large``, ``grammar_too_large``)."""

    max_text_bytes: int = _CORE_DEFAULTS.max_text_bytes
    max_rules: int = _CORE_DEFAULTS.max_rules
    max_nesting_depth: int = _CORE_DEFAULTS.max_nesting_depth
    max_repetition_bound: int = _CORE_DEFAULTS.max_repetition_bound
    max_nodes: int = _CORE_DEFAULTS.max_nodes

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(
                    f"GrammarLimits.{f.name} must be an int, got {type(value).__name__} ({value!r})"
                )
            if value < 0:
                raise ValueError(f"GrammarLimits.{f.name} must be >= 0, got {value}")
            if value > 2**32 - 1:
                raise ValueError(f"GrammarLimits.{f.name} must be below 2**32, got {value}")

    def _to_core(self) -> _core.GrammarLimits:
        core = _core.GrammarLimits()
        for f in fields(self):
            setattr(core, f.name, getattr(self, f.name))
        return core


@dataclass(frozen=True)
class Limit:
    """One row of the limits table: what is bounded, the default, and how to change it (or the
    error that reports it, for a fixed bound)."""

    what: str
    default: int
    unit: str
    where: str


def _mib(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n:,}"


LIMITS: tuple[Limit, ...] = (
    Limit(
        "grammar text size",
        _CORE_DEFAULTS.max_text_bytes,
        "bytes",
        "`GrammarLimits.max_text_bytes` (`text_too_large`)",
    ),
    Limit("rules", _CORE_DEFAULTS.max_rules, "", "`GrammarLimits.max_rules` (`too_many_rules`)"),
    Limit(
        "nesting of `( )` and stacked `* + ? {}`",
        _CORE_DEFAULTS.max_nesting_depth,
        "",
        "`GrammarLimits.max_nesting_depth` (`nesting_too_deep`)",
    ),
    Limit(
        "repetition bound m, n in `{m,n}`",
        _CORE_DEFAULTS.max_repetition_bound,
        "",
        "`GrammarLimits.max_repetition_bound` (`repetition_too_large`)",
    ),
    Limit(
        "syntax-tree nodes",
        _CORE_DEFAULTS.max_nodes,
        "",
        "`GrammarLimits.max_nodes` (`grammar_too_large`)",
    ),
    Limit(
        "automaton states + edges (rules are built on first reach; a rule the root reaches "
        "that is sure to pass it is refused by `compile`/`Matcher`, naming the rule; one whose "
        "lower bound is an eighth of it or more is built there, and refused there if it passes "
        "it; a smaller one that passes it once built raises in the step that reaches it)",
        MAX_AUTOMATON_SIZE,
        "",
        "`gs.limits.MAX_AUTOMATON_SIZE` (`GrammarTooComplexError`, `max_automaton_size`)",
    ),
    Limit(
        "automaton builder nesting",
        MAX_AUTOMATON_NESTING,
        "",
        "`gs.limits.MAX_AUTOMATON_NESTING` (`GrammarTooComplexError`, `max_nesting_depth`)",
    ),
    Limit(
        "work per matcher step (items + stack entries)",
        DEFAULT_MAX_STATE_SIZE,
        "",
        "`compile(max_state_size=...)`, byte level `Matcher(grammar, max_state_size=...)`",
    ),
    Limit(
        "rollback history",
        DEFAULT_MAX_ROLLBACK,
        "accepts",
        "`compile(max_rollback=...)`, byte level `Matcher(grammar, max_rollback=...)`",
    ),
    Limit(
        "rollback history memory (oldest dropped; `rollback` past it is a `ValueError`)",
        DEFAULT_MAX_HISTORY_BYTES,
        "bytes",
        "`compile(max_history_bytes=...)`, byte level `Matcher(grammar, max_history_bytes=...)`",
    ),
    Limit(
        "rule stacks reported by `Matcher.rule_stacks` / `explain`",
        MAX_RULE_STACKS,
        "",
        "`Matcher.rule_stacks(limit=...)`",
    ),
    Limit(
        "compiled-grammar cache memory",
        DEFAULT_CACHE_LIMIT_BYTES,
        "bytes",
        "`gs.compiled.set_cache_limit_bytes(...)`",
    ),
    Limit("compiled grammars cached", MAX_CACHE_ENTRIES, "", "`gs.limits.MAX_CACHE_ENTRIES`"),
    Limit(
        "shared mask cache memory; background precompute stops past it (with the live entries)",
        DEFAULT_CACHE_LIMIT_BYTES,
        "bytes",
        "`gs.compiled.set_cache_limit_bytes(...)`",
    ),
    Limit(
        "automaton states a shared-cache key spans (larger states are not shared)",
        MAX_SHARED_KEY_STATES,
        "",
        "`gs.limits.MAX_SHARED_KEY_STATES`",
    ),
    Limit(
        "parser configurations memoized per classification walk (1 KiB each)",
        MAX_WALK_CONFIGS,
        "",
        "`gs.limits.MAX_WALK_CONFIGS` (past it, steps run the parser)",
    ),
    Limit(
        "threads one classification is split across",
        MAX_CLASSIFY_CHUNKS,
        "",
        "`gs.limits.MAX_CLASSIFY_CHUNKS`",
    ),
    Limit(
        "a fill's wait for the mask a worker is filling ahead (prefetch), then it fills its own",
        FILL_AHEAD_PATIENCE_US,
        "µs",
        "`gs.limits.FILL_AHEAD_PATIENCE_US`",
    ),
    Limit(
        "loop classes whose tokens a vocabulary lists for first masks (kept with its trie)",
        MAX_CLASS_RUNS,
        "",
        "`gs.limits.MAX_CLASS_RUNS` (further classes: their tokens are scanned)",
    ),
    Limit(
        "JSON Schema document nesting",
        MAX_SCHEMA_DEPTH,
        "levels",
        "`gs.limits.MAX_SCHEMA_DEPTH` (`SchemaError`)",
    ),
    Limit(
        "schema nesting followed through `$ref`/`allOf`/`anyOf`",
        MAX_SCHEMA_NESTING,
        "",
        "`gs.limits.MAX_SCHEMA_NESTING` (`SchemaError`)",
    ),
    Limit(
        "`$ref` chain merged into `allOf`",
        MAX_REF_CHAIN,
        "",
        "`gs.limits.MAX_REF_CHAIN` (`SchemaError`)",
    ),
    Limit(
        "`anyOf` x `allOf` branches after merging (pairs proved empty not counted)",
        MAX_ANYOF_BRANCHES,
        "",
        "`gs.limits.MAX_ANYOF_BRANCHES` (`SchemaError`)",
    ),
    Limit(
        "`anyOf` x `allOf` pairs read for emptiness proofs",
        MAX_ANYOF_PAIRS_READ,
        "",
        "`gs.limits.MAX_ANYOF_PAIRS_READ` (past it: as over `MAX_ANYOF_BRANCHES`)",
    ),
    Limit(
        "`oneOf` branches checked for overlap",
        MAX_ONEOF_BRANCHES,
        "",
        "`gs.limits.MAX_ONEOF_BRANCHES` (`SchemaError` when strict)",
    ),
    Limit(
        "`oneOf` branches negated (inside `not`, `if`, or another `oneOf`'s exclusion)",
        MAX_NEGATED_ONEOF_BRANCHES,
        "",
        "`gs.limits.MAX_NEGATED_ONEOF_BRANCHES` (beyond it the negation is not expressible)",
    ),
    Limit(
        "`patternProperties` schemas per object",
        MAX_PATTERN_GROUPS,
        "",
        "`gs.limits.MAX_PATTERN_GROUPS` (`SchemaError` when strict)",
    ),
    Limit(
        "`uniqueItems` subset rules",
        MAX_UNIQUE_STATES,
        "",
        "`gs.limits.MAX_UNIQUE_STATES` (`SchemaError` when strict)",
    ),
    Limit(
        "integer range enumerated as the item values of `uniqueItems`",
        MAX_UNIQUE_DOMAIN,
        "values",
        "`gs.limits.MAX_UNIQUE_DOMAIN` (beyond it, below 2^32 values, `uniqueItems` is reported)",
    ),
    Limit(
        'subset rules of one object in `property_order="any"` (2^12: twelve properties)',
        MAX_ANY_ORDER_STATES,
        "",
        "`gs.limits.MAX_ANY_ORDER_STATES` (`SchemaError` when strict, else schema order)",
    ),
    Limit(
        "counting rules of one array with `contains` and `minItems`/`maxItems`",
        MAX_CONTAINS_STATES,
        "",
        "`gs.limits.MAX_CONTAINS_STATES` (`SchemaError` when strict)",
    ),
    Limit(
        "`multipleOf` remainder states",
        MAX_MULTIPLE_OF_STATES,
        "",
        "`gs.limits.MAX_MULTIPLE_OF_STATES` (`SchemaError` when strict)",
    ),
    Limit(
        "whitespace run between JSON tokens (flexible mode)",
        DEFAULT_MAX_WHITESPACE,
        "bytes",
        "`schema_to_gbnf(max_whitespace=...)`",
    ),
    Limit(
        "doctor: alternatives removed one by one to name an ambiguous_growth culprit",
        DOCTOR_MAX_ABLATIONS,
        "",
        "`gs.limits.DOCTOR_MAX_ABLATIONS` (then reported without a culprit)",
    ),
    Limit(
        "doctor: matcher state while measuring ambiguous_growth",
        DOCTOR_MEASURE_STATE_SIZE,
        "",
        "`gs.limits.DOCTOR_MEASURE_STATE_SIZE` (reaching it counts as growth)",
    ),
    Limit(
        "doctor: shadowed_alternative automaton (rules inlined up to 8 deep)",
        DOCTOR_MAX_NFA_STATES,
        "states",
        "`gs.limits.DOCTOR_MAX_NFA_STATES` (the pair is not decided)",
    ),
    Limit(
        "doctor: Python frames for the recursive walks",
        DOCTOR_RECURSION_LIMIT,
        "",
        "`gs.limits.DOCTOR_RECURSION_LIMIT` (a check past it is listed in `Report.skipped`)",
    ),
    Limit(
        "whitespace run in the output (JSON Schema grammars; GBNF: off)",
        DEFAULT_JSON_MAX_WHITESPACE,
        "bytes",
        "`compile(max_whitespace=...)`, byte level `Matcher(grammar, max_whitespace=...)`",
    ),
    Limit(
        "regex group nesting", MAX_GROUP_DEPTH, "", "`gs.limits.MAX_GROUP_DEPTH` (`SchemaError`)"
    ),
    Limit("regex repetition bound", MAX_REPEAT, "", "`gs.limits.MAX_REPEAT` (`SchemaError`)"),
    Limit(
        "string automaton states (patterns, lookaheads, key sets)",
        MAX_DFA_STATES,
        "",
        "`gs.limits.MAX_DFA_STATES` (`SchemaError` when strict)",
    ),
    Limit(
        "converted request grammars kept per engine (SGLang, vLLM adapters)",
        ENGINE_GRAMMAR_CACHE_ENTRIES,
        "",
        "`gs.limits.ENGINE_GRAMMAR_CACHE_ENTRIES` (least recently used dropped)",
    ),
    Limit(
        "grammar compile threads per engine adapter",
        ENGINE_COMPILE_THREADS,
        "",
        "`EngineGrammars(compile_threads=...)`",
    ),
    Limit(
        "first masks computed by an engine adapter's compile (per new grammar)",
        ENGINE_PRECOMPUTE_MS,
        "ms",
        "`EngineGrammars(precompute_ms=...)`, env `GBNF_SAMPLER_PRECOMPUTE_MS`",
    ),
    Limit(
        "triggers of one triggered grammar or `triggered_tags`",
        MAX_TRIGGERS,
        "",
        "`gs.limits.MAX_TRIGGERS` (`ValueError`, `StructuralTagError`)",
    ),
    Limit(
        "structural tag nesting",
        MAX_STRUCTURAL_TAG_DEPTH,
        "levels",
        "`gs.limits.MAX_STRUCTURAL_TAG_DEPTH` (`StructuralTagError`)",
    ),
    Limit("server: request body", SERVE_MAX_BODY_BYTES, "bytes", "fixed (HTTP 413)"),
    Limit(
        "server: grammar or schema in a request",
        SERVE_MAX_GRAMMAR_BYTES,
        "bytes",
        "fixed (HTTP 413)",
    ),
    Limit("server: decoding slots", SERVE_DEFAULT_PARALLEL, "", "`gbnf-sampler serve --parallel`"),
    Limit(
        "server: requests waiting beyond the slots",
        SERVE_DEFAULT_QUEUE,
        "",
        "`gbnf-sampler serve --queue` (HTTP 429 when full)",
    ),
    Limit(
        "server: context per slot (prompt + completion)",
        SERVE_DEFAULT_CTX,
        "tokens",
        "`gbnf-sampler serve --ctx` (HTTP 400 `context_length_exceeded`)",
    ),
    Limit(
        "server: choices per request (`n`)",
        SERVE_MAX_CHOICES,
        "",
        "fixed (HTTP 400; each choice takes a slot or a queue place)",
    ),
    Limit(
        "server: prompt tokens evaluated per slot per step",
        SERVE_PREFILL_CHUNK,
        "tokens",
        "fixed (long prompts are evaluated in chunks between other slots' steps)",
    ),
    Limit(
        "jump-forward draft tokens verified per batch",
        DEFAULT_MAX_DRAFT_TOKENS,
        "tokens",
        "`gs.llama.generate(max_draft=...)`, `gbnf-sampler serve --max-draft`",
    ),
)


def markdown_table() -> str:
    """The README's limits table, generated from :data:`LIMITS`."""
    rows = ["| limit | default | where |", "|---|---|---|"]
    for limit in LIMITS:
        value = _mib(limit.default) if limit.unit == "bytes" else f"{limit.default:,}"
        unit = f" {limit.unit}" if limit.unit not in ("", "bytes") else ""
        rows.append(f"| {limit.what} | {value}{unit} | {limit.where} |")
    return "\n".join(rows) + "\n"


__all__ = [
    "DEFAULT_CACHE_LIMIT_BYTES",
    "DEFAULT_JSON_MAX_WHITESPACE",
    "DEFAULT_MAX_DRAFT_TOKENS",
    "DEFAULT_MAX_HISTORY_BYTES",
    "DEFAULT_MAX_ROLLBACK",
    "DEFAULT_MAX_STATE_SIZE",
    "DEFAULT_MAX_WHITESPACE",
    "DOCTOR_MAX_ABLATIONS",
    "DOCTOR_MAX_CLASS_CHECK",
    "DOCTOR_MAX_INLINE_DEPTH",
    "DOCTOR_MAX_LITERAL_CHECKS",
    "DOCTOR_MAX_NFA_STATES",
    "DOCTOR_MAX_PAIRWISE",
    "DOCTOR_MEASURE_STATE_SIZE",
    "DOCTOR_RECURSION_LIMIT",
    "ENGINE_COMPILE_THREADS",
    "ENGINE_GRAMMAR_CACHE_ENTRIES",
    "ENGINE_PRECOMPUTE_MS",
    "FILL_AHEAD_PATIENCE_US",
    "LIMITS",
    "MASK_FILE_VERSION",
    "MAX_ANYOF_BRANCHES",
    "MAX_ANYOF_PAIRS_READ",
    "MAX_ANY_ORDER_STATES",
    "MAX_AUTOMATON_NESTING",
    "MAX_AUTOMATON_SIZE",
    "MAX_CACHE_ENTRIES",
    "MAX_CLASSIFY_CHUNKS",
    "MAX_CLASS_RUNS",
    "MAX_CONTAINS_STATES",
    "MAX_DEPENDENCIES",
    "MAX_DFA_STATES",
    "MAX_ENUMERATED_MULTIPLES",
    "MAX_GROUP_DEPTH",
    "MAX_INDENT_DEPTH",
    "MAX_LOOKAHEAD_UNROLL",
    "MAX_MULTIPLE_OF_STATES",
    "MAX_NEGATED_ONEOF_BRANCHES",
    "MAX_NEGATION_DEPTH",
    "MAX_NFA_STATES",
    "MAX_ONEOF_BRANCHES",
    "MAX_OVERLAP_PROOF_DEPTH",
    "MAX_PATTERN_GROUPS",
    "MAX_REF_CHAIN",
    "MAX_REPEAT",
    "MAX_RULE_STACKS",
    "MAX_SCHEMA_DEPTH",
    "MAX_SCHEMA_KIND_DEPTH",
    "MAX_SCHEMA_LOGIC_DEPTH",
    "MAX_SCHEMA_NESTING",
    "MAX_SHARED_KEY_STATES",
    "MAX_STRUCTURAL_TAG_DEPTH",
    "MAX_TRIGGERS",
    "MAX_UNIQUE_DOMAIN",
    "MAX_UNIQUE_STATES",
    "MAX_WALK_CONFIGS",
    "SERVE_DEFAULT_CTX",
    "SERVE_DEFAULT_PARALLEL",
    "SERVE_DEFAULT_QUEUE",
    "SERVE_MAX_BODY_BYTES",
    "SERVE_MAX_CHOICES",
    "SERVE_MAX_GRAMMAR_BYTES",
    "SERVE_PREFILL_CHUNK",
    "GrammarLimits",
    "Limit",
    "markdown_table",
]
