"""``Grammar``: a parsed, validated grammar, built from GBNF or from higher-level descriptions."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from . import _core, syntax
from .errors import Diagnostic, GrammarError
from .limits import MAX_AUTOMATON_NESTING, MAX_AUTOMATON_SIZE, GrammarLimits
from .regex import regex_to_gbnf
from .schema import (
    JSON_GBNF,
    choices_to_gbnf,
    output_whitespace_bound,
    response_format_to_gbnf,
    schema_to_gbnf,
    tools_to_gbnf,
)

DEFAULT_ROOT = "root"
_DEFAULT_LIMITS = GrammarLimits()

# Constructors that live in a later stage (gbnf_sampler.structural registers "triggered" and
# "structural_tag"), so that this core module imports none of them.
_CONSTRUCTORS: dict[str, Callable[..., Grammar]] = {}


def register_constructor(name: str, constructor: Callable[..., Grammar]) -> None:
    """Makes ``Grammar.<name>`` call ``constructor`` (used by gbnf_sampler.structural)."""
    _CONSTRUCTORS[name] = constructor


def _constructor(name: str) -> Callable[..., Grammar]:
    constructor = _CONSTRUCTORS.get(name)
    if constructor is None:
        raise RuntimeError(f"Grammar.{name} needs gbnf_sampler.structural: import gbnf_sampler")
    return constructor


def _diagnostic(raw: Mapping[str, Any]) -> Diagnostic:
    return Diagnostic(
        severity=str(raw["severity"]),
        code=str(raw["code"]),
        message=str(raw["message"]),
        hint=str(raw["hint"]),
        line=int(raw["line"]),
        column=int(raw["column"]),
        width=int(raw["width"]),
        snippet=str(raw["snippet"]),
        rendered=str(raw["rendered"]),
    )


def _grammar_error(payload: Mapping[str, Any]) -> GrammarError:
    """Builds the Python exception from the core's error payload (called by the extension)."""
    return GrammarError(
        [_diagnostic(d) for d in payload["errors"]],
        [_diagnostic(d) for d in payload["warnings"]],
    )


def leaf_node(raw: tuple[Any, ...]) -> syntax.Node:
    """A leaf of the core's tuple tree (``lit``, ``class``, ``any``, ``ref``, ``token``) as a
    syntax node; fields after the kind's own are ignored."""
    kind = raw[0]
    if kind == "lit":
        return syntax.Literal(tuple(raw[1]))
    if kind == "class":
        return syntax.CharClass(tuple((lo, hi) for lo, hi in raw[1]), bool(raw[2]))
    if kind == "any":
        return syntax.AnyChar()
    if kind == "ref":
        return syntax.RuleRef(raw[1])
    if kind == "token":
        return syntax.TokenRef(raw[1], raw[2], bool(raw[3]))
    raise AssertionError(f"unknown node kind from the core: {kind!r}")


def _node_recursive(raw: tuple[Any, ...]) -> syntax.Node:
    """The same conversion as :func:`_node`, recursively: about twice as fast, for the trees
    that fit Python's recursion limit."""
    kind = raw[0]
    if kind == "seq":
        return syntax.Sequence(tuple([_node_recursive(c) for c in raw[1]]))
    if kind == "alt":
        return syntax.Alternation(tuple([_node_recursive(c) for c in raw[1]]))
    if kind == "repeat":
        return syntax.Repeat(_node_recursive(raw[1]), raw[2], raw[3])
    return leaf_node(raw)


class _RulesOnDemand(Mapping[str, syntax.Node]):
    """Rule name -> syntax tree, in definition order, each tree built by the core when first
    looked up (and kept)."""

    def __init__(self, core: _core.Grammar) -> None:
        self._core = core
        self._names = core.rule_names()
        self._known = frozenset(self._names)
        self._built: dict[str, syntax.Node] = {}

    def __getitem__(self, name: str) -> syntax.Node:
        node = self._built.get(name)
        if node is None:
            if name not in self._known:
                raise KeyError(name)
            node = self._built[name] = self._core.rule_node(name, _NODE_CLASSES)
        return node

    def __contains__(self, name: object) -> bool:
        return name in self._known

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


# The node classes in the order the core's rules_nodes builds them.
_NODE_CLASSES = (
    syntax.Literal,
    syntax.CharClass,
    syntax.AnyChar,
    syntax.RuleRef,
    syntax.TokenRef,
    syntax.Repeat,
    syntax.Sequence,
    syntax.Alternation,
)


def _convert(raw: tuple[Any, ...]) -> syntax.Node:
    try:
        return _node_recursive(raw)
    except RecursionError:
        return _node(raw)


def _node(raw: tuple[Any, ...]) -> syntax.Node:
    """Converts the core's nested tuples to ast nodes, iteratively: trees can be deeper than
    Python's recursion limit."""
    done: list[syntax.Node] = []
    # Post-order: (raw, False) expands children first; (raw, True) assembles from `done`.
    stack: list[tuple[tuple[Any, ...], bool]] = [(raw, False)]
    while stack:
        item, ready = stack.pop()
        kind = item[0]
        children = [item[1]] if kind == "repeat" else item[1] if kind in ("seq", "alt") else []
        if not ready and children:
            stack.append((item, True))
            stack.extend((child, False) for child in reversed(children))
            continue
        if not children:
            done.append(syntax.Sequence(()) if kind == "seq" else leaf_node(item))
            continue
        parts = tuple(done[len(done) - len(children) :])
        del done[len(done) - len(children) :]
        if kind == "seq":
            done.append(syntax.Sequence(parts))
        elif kind == "alt":
            done.append(syntax.Alternation(parts))
        else:
            done.append(syntax.Repeat(parts[0], item[2], item[3]))
    return done[0]


def _encode_text(text: str | bytes) -> bytes:
    if isinstance(text, bytes):
        return text
    if isinstance(text, str):
        # Lone surrogates survive as (invalid) UTF-8 bytes so the parser reports their position.
        return text.encode("utf-8", "surrogatepass")
    raise TypeError(f"grammar text must be str or bytes, not {type(text).__name__}")


class Grammar:
    """A grammar that parsed and passed analysis. Immutable; safe to share between threads.

    Build one with :meth:`from_gbnf` (or the JSON Schema / regex / choices constructors). ``rules``
    gives the syntax tree as written; ``warnings`` the non-fatal diagnostics.
    """

    __slots__ = ("_automaton", "_core", "_max_whitespace", "_origin", "_rules")

    def __init__(self, core: _core.Grammar, origin: str = "gbnf") -> None:
        if not isinstance(core, _core.Grammar):
            raise TypeError("use Grammar.from_gbnf(text) (or another from_* constructor)")
        self._core = core
        self._origin = origin
        self._max_whitespace: int | None = None
        self._rules: dict[str, syntax.Node] | None = None
        self._automaton: _core.Automaton | None = None

    def _made_from(self, origin: str, max_whitespace: int | None = None) -> Grammar:
        self._origin = origin
        self._max_whitespace = max_whitespace
        return self

    @property
    def max_whitespace(self) -> int | None:
        """The run-time bound on whitespace runs that ``compile`` and ``Matcher`` apply unless
        told otherwise: None (no bound) for GBNF, ``schema.output_whitespace_bound(options)``
        for grammars made from a JSON Schema (see :mod:`gbnf_sampler.limits`)."""
        return self._max_whitespace

    @property
    def origin(self) -> str:
        """What the grammar was built from: ``"gbnf"``, ``"json_schema"`` (also
        :meth:`json` and JSON ``response_format``), ``"regex"``, ``"choices"``, ``"tools"``
        or ``"response_format"`` (plain text). ``Matcher.explain`` reports JSON pointers for
        ``"json_schema"``."""
        return self._origin

    @classmethod
    def from_gbnf(
        cls, text: str | bytes, root: str = DEFAULT_ROOT, *, limits: GrammarLimits | None = None
    ) -> Grammar:
        """Parses GBNF text (llama.cpp's grammar language). Raises :class:`GrammarError`."""
        if not isinstance(root, str):
            raise TypeError(f"root must be str, not {type(root).__name__}")
        if limits is not None and not isinstance(limits, GrammarLimits):
            raise TypeError(f"limits must be a GrammarLimits, not {type(limits).__name__}")
        core_limits = (limits or _DEFAULT_LIMITS)._to_core()
        # A lone surrogate cannot name a rule; as UTF-8-ish bytes it is simply not found.
        root_name = root.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        return cls(_core.parse_grammar(_encode_text(text), root_name, core_limits))

    @classmethod
    def from_json_schema(cls, schema: Any, **options: Any) -> Grammar:
        """A grammar for JSON documents valid under ``schema`` (dict, JSON text or a Pydantic
        model class). Options: see :func:`gbnf_sampler.json_schema.schema_to_gbnf`."""
        text = schema_to_gbnf(schema, **options)
        return cls.from_gbnf(text)._made_from("json_schema", output_whitespace_bound(**options))

    @classmethod
    def from_regex(cls, pattern: str, **options: Any) -> Grammar:
        """A grammar for strings fully matching ``pattern`` (ECMA-262 dialect of JSON Schema)."""
        return cls.from_gbnf(regex_to_gbnf(pattern, **options))._made_from("regex")

    @classmethod
    def from_choices(cls, choices: list[str]) -> Grammar:
        """A grammar for exactly one of the given strings."""
        return cls.from_gbnf(choices_to_gbnf(choices))._made_from("choices")

    @classmethod
    def from_tools(cls, tools: Sequence[Mapping[str, Any]], tool_choice: Any = "auto") -> Grammar:
        """A grammar for OpenAI-style tool calls over ``tools``."""
        text = tools_to_gbnf(list(tools), tool_choice=tool_choice)
        return cls.from_gbnf(text)._made_from("tools", output_whitespace_bound())

    @classmethod
    def from_response_format(cls, response_format: Mapping[str, Any], **options: Any) -> Grammar:
        """A grammar for an OpenAI-style ``response_format``. Options (``property_order``...):
        see :func:`gbnf_sampler.json_schema.schema_to_gbnf`."""
        json_output = isinstance(response_format, Mapping) and response_format.get("type") != "text"
        origin = "json_schema" if json_output else "response_format"
        bound = output_whitespace_bound(**options) if json_output else None
        text = response_format_to_gbnf(response_format, **options)
        return cls.from_gbnf(text)._made_from(origin, bound)

    @classmethod
    def triggered(
        cls,
        body: Any,
        triggers: Any,
        *,
        at_start: bool = False,
        required: bool = False,
        trigger_in_body: bool = False,
    ) -> Grammar:
        """A lazy grammar: free text without any trigger, then a trigger, then ``body`` (a
        Grammar or anything :meth:`coerce` takes). ``triggers``: strings, ``gs.Trigger``s
        (literal, regex, token) or llama.cpp-style dicts. ``required``: the output must reach a
        trigger; ``at_start``: it must open with one. ``trigger_in_body``: the body's own text
        starts with the trigger (llama.cpp's lazy grammars) instead of following it. See
        :mod:`gbnf_sampler.structural.triggers`."""
        return _constructor("triggered")(
            body,
            triggers,
            at_start=at_start,
            required=required,
            trigger_in_body=trigger_in_body,
        )

    @classmethod
    def from_structural_tag(cls, spec: Any, **options: Any) -> Grammar:
        """A grammar from a structural tag (a JSON-able dict close to xgrammar's structural-tag
        JSON: sequences, choices, tagged sections, triggered sections...). Raises
        :class:`~gbnf_sampler.errors.StructuralTagError` naming the JSON path of a bad spec. See
        :mod:`gbnf_sampler.structural.tags`."""
        return _constructor("structural_tag")(spec, **options)

    @classmethod
    def json(cls) -> Grammar:
        """A grammar for any JSON value."""
        return cls.from_gbnf(JSON_GBNF)._made_from("json_schema", output_whitespace_bound())

    @classmethod
    def coerce(cls, value: Any) -> Grammar:
        """A Grammar from what users pass around: a Grammar (as is), GBNF text (str or bytes),
        a structural tag (a dict with ``"type": "structural_tag"``), a JSON Schema (dict) or a
        Pydantic model class."""
        if isinstance(value, Grammar):
            return value
        if isinstance(value, (str, bytes)):
            return cls.from_gbnf(value)
        if isinstance(value, dict) and value.get("type") == "structural_tag":
            return cls.from_structural_tag(value)
        if isinstance(value, dict) or hasattr(value, "model_json_schema"):
            return cls.from_json_schema(value)
        raise TypeError(
            "expected a Grammar, GBNF text, a JSON Schema dict or a Pydantic model class, "
            f"not {type(value).__name__}"
        )

    @property
    def root(self) -> str:
        return str(self._core.root_name)

    @property
    def rules(self) -> dict[str, syntax.Node]:
        """Rule name -> syntax tree, in definition order (see :mod:`gbnf_sampler.syntax`)."""
        if self._rules is None:
            self._rules = dict(self._core.rules_nodes(_NODE_CLASSES))
        return dict(self._rules)

    def _rules_on_demand(self) -> Mapping[str, syntax.Node]:
        """:attr:`rules` for a reader that visits few rules of a large grammar (the doctor): the
        trees already converted, or else a mapping that converts each rule when first looked
        up."""
        return self._rules if self._rules is not None else _RulesOnDemand(self._core)

    def _adopt_rules(self, rules: dict[str, syntax.Node]) -> None:
        """Takes ``rules`` as :attr:`rules` when it is not converted yet: trees equal to the
        core's, built by another reader of the same parse (the doctor's positioned source), so
        that both share the node objects."""
        if self._rules is None:
            self._rules = rules

    def automaton(self) -> _core.Automaton:
        """The byte-level automaton of the grammar, made on first use and shared by every
        matcher and compiled grammar made from this object. Only the root rule is built here;
        every other rule is built when a matcher first reaches it. Raises GrammarTooComplexError
        when the root would exceed ``limits.MAX_AUTOMATON_SIZE``, or when a rule the root reaches
        is sure to (a lower bound of its size, from its repetitions, passes it); a rule that
        passes it only once built raises it from the step that reaches it."""
        automaton = self._automaton
        if automaton is None:
            # Two threads may both build it; either result is correct and one is kept.
            automaton = _core.Automaton.build(self._core, MAX_AUTOMATON_SIZE, MAX_AUTOMATON_NESTING)
            self._automaton = automaton
        return automaton

    @property
    def warnings(self) -> list[Diagnostic]:
        return [_diagnostic(d) for d in self._core.warnings()]

    @property
    def distinct_items(self) -> list[str]:
        """The rules a ``#@ distinct-items`` directive names: JSON arrays whose items the
        matcher keeps pairwise distinct (see the README's Grammars section)."""
        return list(self._core.distinct_item_rules())

    def to_gbnf(self) -> str:
        """Canonical GBNF text; parsing it with the same root gives an equal grammar."""
        return str(self._core.to_gbnf())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Grammar):
            return NotImplemented
        return bool(self._core.same_as(other._core))

    def __hash__(self) -> int:
        return hash(self.to_gbnf())

    def __repr__(self) -> str:
        n = len(self._core.rules_ast())
        return f"<Grammar root={self.root!r} rules={n}>"


__all__ = ["DEFAULT_ROOT", "Grammar", "register_constructor"]
