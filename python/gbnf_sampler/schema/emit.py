"""Rule bookkeeping and whitespace layout for the JSON Schema converter."""

from __future__ import annotations

import re

from ..limits import MAX_INDENT_DEPTH
from ..regex import automata, tree
from ..regex.tree import Node, Ranges
from .json_chars import ANY_JSON_CHAR, json_chars_gbnf
from .number_ranges import NUMBER

WHITESPACE_MODES = ("flexible", "compact", "indent")
# The comment line that marks array rules whose items must be pairwise distinct (uniqueItems);
# our matcher enforces it (csrc/grammar/directives.h), other GBNF readers see a comment.
DISTINCT_ITEMS_DIRECTIVE = "#@ distinct-items"


def sanitize(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9-]+", "-", name).strip("-")
    return cleaned or "r"


_HELPERS = re.compile(
    r"(root|ws|value|object|array|string|string-tail|number|char|boolean)(-[0-9]+)?"
)


# A rule name outside literals and character classes (a repetition bound such as {0,5} may
# match too: it only counts when a rule has that name, and keeping a rule is always safe).
_WORDS = re.compile(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]|([A-Za-z0-9-]+)')


def _is_helper(name: str) -> bool:
    return _HELPERS.fullmatch(name) is not None


class Rules:
    """Named GBNF rules in creation order; identical bodies share one name."""

    def __init__(self) -> None:
        self.bodies: dict[str, str | None] = {}
        self.by_body: dict[str, str] = {}
        self._char_sets: dict[Ranges, str] = {}
        self.formats: dict[str, str] = {}  # format name -> rule (format_grammars)
        self.strings: dict[str, str | None] = {}  # string keywords -> rule (scalars.string_rule)
        # declared property names -> the rule for every other key (keys.KeySpace)
        self.other_keys: dict[tuple[str, ...], str | None] = {}
        # base -> a number n such that base, base-2 .. base-(n-1) are all taken: the search
        # for a free name starts there (from 1 it was quadratic: 42 s of JFrog File Spec)
        self._taken_below: dict[str, int] = {}
        # rules named by a "#@ distinct-items" directive (pairwise distinct array items)
        self.distinct: list[str] = []

    def reserve(self, hint: str) -> str:
        base = sanitize(hint)
        if _is_helper(base):
            base += "-schema"
        n = self._taken_below.get(base, 1)
        name = base if n == 1 else f"{base}-{n}"
        while name in self.bodies:
            n += 1
            name = f"{base}-{n}"
        self._taken_below[base] = n + 1
        self.bodies[name] = None
        return name

    def drop(self, name: str) -> None:
        """Forget a reserved name; the next ``reserve`` of its base may hand it out again."""
        del self.bodies[name]
        # The name is free again as a base of its own, and as number k of the base it numbers:
        # that base's search restarts at k, not at 1 (from 1 it was quadratic when many rules
        # are dropped: 50,000 unsatisfiable branches of Azure Pipelines cost 2.4 s).
        self._taken_below.pop(name, None)
        prefix, _, number = name.rpartition("-")
        if prefix and number.isdigit() and prefix in self._taken_below:
            self._taken_below[prefix] = min(self._taken_below[prefix], int(number))

    def define(self, name: str, body: str) -> str:
        self.bodies[name] = body
        self.by_body.setdefault(body, name)
        return name

    def add(self, hint: str, body: str) -> str:
        """A rule with this body (an existing one when the body is already defined)."""
        if body in self.by_body:
            return self.by_body[body]
        if re.fullmatch(r"[A-Za-z0-9-]+", body) and body in self.bodies:
            return body  # a plain reference to another rule: no alias needed
        return self.define(self.reserve(hint), body)

    def add_distinct(self, hint: str, body: str) -> str:
        """An array rule whose items the matcher keeps pairwise distinct (never shared with a
        plain array rule of the same body)."""
        key = "#@ distinct-items " + body
        if key not in self.by_body:
            self.by_body[key] = name = self.reserve(hint)
            self.bodies[name] = body
            self.distinct.append(name)
        return self.by_body[key]

    def fixed(self, name: str, body: str) -> str:
        """A helper rule under a fixed name (defined once)."""
        if name not in self.bodies:
            self.define(name, body)
        return name

    def json_chars(self, ranges: Ranges) -> str:
        """A rule for one character of ``ranges`` as written inside a JSON string."""
        if ranges not in self._char_sets:
            body = json_chars_gbnf(ranges)
            if ranges == ANY_JSON_CHAR:
                self._char_sets[ranges] = self.fixed("char", body)
            else:
                self._char_sets[ranges] = self.add("char-set", body)
        return self._char_sets[ranges]

    def text(self, root: str) -> str:
        """The grammar: ``root ::= root`` (an expression) and the rules it reaches, in creation
        order. Rules made for branches the conversion later dropped are left out: they cannot
        change the language, and on some schemas they were most of the text (snapcraft's
        uniqueItems lists: 6,912 rules no branch used)."""
        for name, body in self.bodies.items():
            if body is None:
                raise RuntimeError(f"rule {name} reserved but never defined")
        used = self._reached(root)
        lines = [f"root ::= {root}"] if root != "root" else []
        lines += [f"{name} ::= {body}" for name, body in self.bodies.items() if name in used]
        lines += [f"{DISTINCT_ITEMS_DIRECTIVE} {name}" for name in self.distinct if name in used]
        return "\n".join(lines) + "\n"

    def _reached(self, root: str) -> set[str]:
        """The rules the expression ``root`` references, directly or through other rules."""
        seen: set[str] = set()
        pending = [root]
        while pending:
            for word in _WORDS.findall(pending.pop()):
                if word and word not in seen and word in self.bodies:
                    seen.add(word)
                    pending.append(self.bodies[word] or "")
        return seen


class Layout:
    """Where whitespace may go. ``depth`` only matters for ``indent`` (0 otherwise)."""

    def __init__(self, rules: Rules, mode: str, max_ws: int, indent: int) -> None:
        if mode not in WHITESPACE_MODES:
            raise ValueError(f"whitespace must be one of {WHITESPACE_MODES}, not {mode!r}")
        if max_ws < 0:
            raise ValueError("max_whitespace must be >= 0")
        self.rules = rules
        self.mode = mode
        self.max_ws = max_ws
        self.indent = indent

    def depth(self, depth: int) -> int:
        return min(depth, MAX_INDENT_DEPTH) if self.mode == "indent" else 0

    def _ws(self) -> str:
        n = self.max_ws
        body = f'[ \\t]{{0,{n}}} | "\\r"? "\\n" [ \\t]{{0,{n}}}' if n else '"" | "\\r"? "\\n"'
        return self.rules.fixed("ws", body)

    def _newline(self, depth: int) -> str:
        return tree.literal_gbnf("\n" + " " * (self.indent * depth))

    def open(self, bracket: str, depth: int) -> str:
        if self.mode == "compact":
            return tree.literal_gbnf(bracket)
        if self.mode == "flexible":
            return f"{tree.literal_gbnf(bracket)} {self._ws()}"
        return tree.literal_gbnf(bracket + "\n" + " " * (self.indent * (depth + 1)))

    def sep(self, depth: int) -> str:
        if self.mode == "compact":
            return '","'
        if self.mode == "flexible":
            ws = self._ws()
            return f'{ws} "," {ws}'
        return tree.literal_gbnf(",\n" + " " * (self.indent * (depth + 1)))

    def close(self, bracket: str, depth: int) -> str:
        if self.mode == "compact":
            return tree.literal_gbnf(bracket)
        if self.mode == "flexible":
            return f"{self._ws()} {tree.literal_gbnf(bracket)}"
        return self._newline(depth)[:-1] + bracket + '"'

    def empty(self, brackets: str) -> str:
        if self.mode == "flexible":
            return f"{tree.literal_gbnf(brackets[0])} {self._ws()} {tree.literal_gbnf(brackets[1])}"
        return tree.literal_gbnf(brackets)

    def colon(self) -> str:
        if self.mode == "compact":
            return '":"'
        if self.mode == "indent":
            return '": "'
        ws = self._ws()
        return f'{ws} ":" {ws}'


def string_body(rules: Rules) -> str:
    """``string-body``: the rest of a JSON string after its opening quote (right-recursive)."""
    char = rules.json_chars(ANY_JSON_CHAR)
    return rules.fixed("string-tail", f'"\\"" | {char} string-tail')


def any_string(rules: Rules) -> str:
    return rules.fixed("string", f'"\\"" {string_body(rules)}')


def any_number(rules: Rules) -> str:
    return rules.fixed("number", tree.to_gbnf(NUMBER))


def regex_string(rules: Rules, node: Node, hint: str) -> str:
    """A rule for a JSON string whose decoded content matches ``node``."""
    if node == tree.NEVER:
        raise ValueError("empty string language")
    body = tree.to_gbnf(node, rules.json_chars, top=False) if node != tree.EMPTY else ""
    return rules.add(hint, f'"\\"" {body} "\\""'.replace("  ", " "))


def any_value(rules: Rules, layout: Layout, depth: int) -> str:
    """Rules for any JSON value at ``depth`` (only indent mode has more than one depth)."""
    d = layout.depth(depth)
    name = "value" if layout.mode != "indent" else f"value-{d}"
    if name in rules.bodies:
        return name
    rules.bodies[name] = None
    suffix = f"-{d}" if layout.mode == "indent" else ""
    obj, arr = "object" + suffix, "array" + suffix
    rules.bodies[obj] = None
    rules.bodies[arr] = None
    inner = any_value(rules, layout, depth + 1) if layout.mode == "indent" else name
    string = any_string(rules)
    member = f"{string} {layout.colon()} {inner}"
    sep = layout.sep(d)
    rules.define(
        obj,
        f"{layout.empty('{}')} | {layout.open('{', d)} {member} ({sep} {member})* "
        f"{layout.close('}', d)}",
    )
    rules.define(
        arr,
        f"{layout.empty('[]')} | {layout.open('[', d)} {inner} ({sep} {inner})* "
        f"{layout.close(']', d)}",
    )
    number = any_number(rules)
    rules.define(name, f'{obj} | {arr} | {string} | {number} | "true" | "false" | "null"')
    return name


_SURROGATES: Ranges = ((0xD800, 0xDFFF),)


def dfa_string_rule(rules: Rules, dfa: automata.Dfa, hint: str) -> str | None:
    """A rule for the JSON strings whose decoded value ``dfa`` accepts (None when empty)."""
    dfa = dfa.without(_SURROGATES)  # never in a JSON string (see json_chars)
    if dfa.is_empty():
        return None

    def chars(ranges: Ranges) -> str:  # (no surrogates left: see above)
        return rules.json_chars(ranges) if ranges else ""

    start = automata.to_rules(dfa, chars, rules.define, rules.reserve, '"\\""', hint)
    return rules.add(hint, f'"\\"" {start}')


# A rule body that matches nothing (dropped by the container rules).
NEVER = "<never>"


def quantified(expr: str, lo: int, hi: int | None) -> str:
    """``expr`` repeated lo..hi times (NEVER when hi < lo)."""
    if hi is not None and hi < lo:
        return NEVER
    if hi == 0:
        return '""'
    if (lo, hi) == (1, 1):
        return expr
    q = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((lo, hi))
    if q is None:
        q = f"{{{lo},}}" if hi is None else (f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}")
    return f"({expr}){q}"


def elements(prefix: list[str], item: str | None, j: int, lo: int, hi: int | None, sep: str) -> str:
    """Elements from index j on (j > 0: a separator comes first), lo..hi elements in all."""
    if hi is not None and j >= hi:
        return '""'
    lead = f"{sep} " if j > 0 else ""
    if j < len(prefix):
        rest = elements(prefix, item, j + 1, lo, hi, sep)
        here = f"{lead}{prefix[j]}" + ("" if rest == '""' else f" {rest}")
        return here if j < lo else f"({here})?"
    if item is None:
        return '""' if j >= lo else NEVER
    need = max(0, lo - j)
    room = None if hi is None else hi - j
    if j > 0:
        return quantified(f"{sep} {item}", need, room)
    tail = quantified(f"{sep} {item}", max(0, need - 1), None if room is None else room - 1)
    one = f"{item} {tail}" if tail != '""' else item
    return one if need >= 1 else f"({one})?"


def wrap(
    rules: Rules,
    lay: Layout,
    body: str,
    brackets: str,
    empty_ok: bool,
    depth: int,
    hint: str,
    distinct: bool = False,
) -> str | None:
    """A bracketed list: ``body`` between ``brackets`` (``"[]"`` or ``"{}"``), or the empty list
    when ``empty_ok``; None when neither is possible. ``distinct``: an array whose items the
    matcher keeps pairwise distinct (``Rules.add_distinct``)."""
    d = lay.depth(depth)
    options = []
    if empty_ok:
        options.append(lay.empty(brackets))
    if body != NEVER:
        options.append(f"{lay.open(brackets[0], d)} {body} {lay.close(brackets[1], d)}")
    if not options:
        return None
    if distinct:
        return rules.add_distinct(hint, " | ".join(options))
    return rules.add(hint, " | ".join(options))
