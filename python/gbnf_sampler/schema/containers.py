"""Arrays and objects for the JSON Schema converter.

Arrays: ``prefixItems`` then ``items`` elements, with ``minItems``/``maxItems`` as repetition
bounds (``item ("," item){m-1,n-1}``: large bounds stay small). Objects: declared properties in
the schema's order, each optional one skippable, then additional members (``additionalProperties``
or ``patternProperties``), with ``minProperties``/``maxProperties`` tracked by a count in the rule
names (a state machine: rule (i, k) = "property i is next, k members written so far"). An
object that must have a member outside a list with a value of some schema (``__some_member__``,
a negated ``additionalProperties``) is one of its declared properties outside the list, made
required with that value too, or an undeclared member of that kind among the others.
"""

from __future__ import annotations

import json
from typing import Any

from ..limits import MAX_ANY_ORDER_STATES
from ..regex import tree
from .any_order import AnyOrder, Member, any_order_states
from .contains import CONTAINS_KEYWORDS, ContainsUnsupported, contains_array_rule
from .context import SubschemaCompiler
from .emit import NEVER, elements, quantified, wrap
from .keys import KeySpace, trivial
from .refs import merge
from .scalars import Unsupported, kw_int, pointer
from .unique import unique_array_rule


def _alt(*options: str) -> str:
    live = [o for o in options if o != NEVER]
    if not live:
        return NEVER
    return live[0] if len(live) == 1 else "(" + " | ".join(live) + ")"


# --- arrays --------------------------------------------------------------------------------------


def array_rule(conv: SubschemaCompiler, flat: dict[str, Any], path: str, depth: int) -> str | None:
    hint = _hint_for(path, "array")
    lo = kw_int(flat, "minItems", path, 0) or 0
    hi = kw_int(flat, "maxItems", path)
    if "contains" in flat:
        try:
            return contains_array_rule(conv, flat, path, depth, hint)
        except ContainsUnsupported as err:
            conv.unsupported(err)  # relaxed: the contains keywords are dropped
            flat = {k: v for k, v in flat.items() if k not in CONTAINS_KEYWORDS}
    if flat.get("uniqueItems") is True and (hi is None or hi > 1):
        return unique_array_rule(conv, flat, path, depth)
    prefix_schemas = flat.get("prefixItems", [])
    prefix: list[str] = []
    for i, sub in enumerate(prefix_schemas):
        expr = conv.value(sub, pointer(path, "prefixItems", i), depth + 1)
        if expr is None:
            hi = i if hi is None else min(hi, i)
            break
        prefix.append(expr)
    item = conv.value(flat.get("items", True), pointer(path, "items"), depth + 1)
    if item is None:
        hi = len(prefix) if hi is None else min(hi, len(prefix))
    if hi is not None and hi < lo:
        return None
    sep = conv.layout.sep(conv.layout.depth(depth))
    body = elements(prefix, item, 0, max(lo, 1), hi, sep)
    return wrap(conv.rules, conv.layout, body, "[]", lo == 0, depth, hint)


# --- objects -------------------------------------------------------------------------------------


def _hint_for(path: str, kind: str) -> str:
    tokens = [
        t
        for t in path.split("/")[1:]
        if not t.isdigit()
        and t
        not in ("properties", "items", "prefixItems", "anyOf", "oneOf", "$defs", "definitions")
    ]
    return tokens[-1] if tokens else kind


def key_literal(name: str) -> str:
    """GBNF for a JSON object key (both spellings of non-ASCII characters)."""
    forms = dict.fromkeys([json.dumps(name, ensure_ascii=False), json.dumps(name)])
    return (
        " | ".join(tree.literal_gbnf(f) for f in forms)
        if len(forms) == 1
        else "(" + " | ".join(tree.literal_gbnf(f) for f in forms) + ")"
    )


def _members(
    conv: SubschemaCompiler, flat: dict[str, Any], path: str, depth: int, keys: KeySpace, addl: Any
) -> list[Member] | None:
    props = flat.get("properties") or {}
    required = [r for r in flat.get("required", []) if isinstance(r, str)]
    out: list[Member] = []
    names = list(props) + [r for r in dict.fromkeys(required) if r not in props]
    for name in names:
        sub_path = pointer(path, "properties", name) if name in props else pointer(path, "required")
        matches = keys.pattern_schemas(name)
        schema: Any = props.get(name, True if matches else addl)
        parts = [p for p in [schema, *matches] if not trivial(p)]
        combined: Any = True if not parts else parts[0] if len(parts) == 1 else {"allOf": parts}
        expr = conv.value(combined, sub_path, depth + 1) if keys.name_allowed(name) else None
        if expr is None:
            if name in required:
                return None
            continue
        out.append(Member(key_literal(name), expr, name in required))
    return out


def _additional(conv: SubschemaCompiler, flat: dict[str, Any]) -> Any:
    """The schema for properties matching neither a declared name nor a pattern."""
    if "additionalProperties" in flat:
        return flat["additionalProperties"]
    if "unevaluatedProperties" in flat:
        return flat["unevaluatedProperties"]
    return conv.options.additional_properties is not False


def _declared(flat: dict[str, Any]) -> list[str]:
    declared = list(flat.get("properties") or {})
    return declared + [
        r for r in flat.get("required", []) if isinstance(r, str) and r not in declared
    ]


def object_rule(conv: SubschemaCompiler, flat: dict[str, Any], path: str, depth: int) -> str | None:
    if flat.get("__some_member__"):
        return _some_member_rule(conv, flat, path, depth)
    return _object_rule(conv, flat, path, depth, None)


def _object_rule(
    conv: SubschemaCompiler,
    flat: dict[str, Any],
    path: str,
    depth: int,
    some: tuple[list[str], Any] | None,
) -> str | None:
    """``some``: an undeclared member must be written whose key is none of these names and
    whose value matches that schema too (schema order, no property counts)."""
    addl = _additional(conv, flat)
    keys = KeySpace(conv, flat, path)
    members = _members(conv, flat, path, depth, keys, addl)
    if members is None:
        return None
    declared = _declared(flat)
    extra_body = keys.members(declared, addl, depth)
    hint = _hint_for(path, "object")
    extra = None if extra_body is None else conv.rules.add(hint + "-extra", extra_body)
    special = None
    if some is not None:
        special_body = keys.members(declared + some[0], {"allOf": [addl, some[1]]}, depth)
        if special_body is None:
            return None
        special = conv.rules.add(hint + "-some", special_body)
    lo = kw_int(flat, "minProperties", path, 0) or 0
    hi = kw_int(flat, "maxProperties", path)
    n_required = sum(m.required for m in members)
    if hi is not None and n_required > hi:
        return None
    body = _member_list(conv, members, (extra, special), (max(lo, 1), hi), depth, hint, path)
    empty_ok = lo == 0 and n_required == 0 and special is None
    return wrap(conv.rules, conv.layout, body, "{}", empty_ok, depth, hint)


def _some_member_rule(
    conv: SubschemaCompiler, flat: dict[str, Any], path: str, depth: int
) -> str | None:
    """Objects with a member whose key is outside a list and whose value matches a schema
    (``__some_member__``, from negated ``additionalProperties``): a declared property named
    outside the list, required with that value too, or an undeclared member."""
    needs = flat["__some_member__"]
    rest = {k: v for k, v in flat.items() if k != "__some_member__"}
    blockers = [k for k in ("patternProperties", "minProperties", "maxProperties") if k in rest]
    if len(needs) > 1 or blockers or conv.options.property_order == "any":
        conv.unsupported(
            Unsupported(
                "an object that must have an undeclared member (from a negated "
                "additionalProperties) cannot be expressed beside "
                + (", ".join(blockers) or "another such member or property_order='any'"),
                path,
            )
        )
        return _object_rule(conv, rest, path, depth, None)  # relaxed: without it
    outside, value = list(needs[0]["outside"]), needs[0]["value"]
    options: list[str] = []
    for name in _declared(rest):
        if name not in outside:
            variant = merge(rest, {"required": [name], "properties": {name: value}}, path)
            expr = None if variant is False else _object_rule(conv, variant, path, depth, None)
            if expr is not None:
                options.append(expr)
    expr = _object_rule(conv, rest, path, depth, (outside, value))
    if expr is not None:
        options.append(expr)
    if not options:
        return None
    return conv.rules.add(_hint_for(path, "object"), " | ".join(dict.fromkeys(options)))


def _member_list(
    conv: SubschemaCompiler,
    members: list[Member],
    extras: tuple[str | None, str | None],
    bounds: tuple[int, int | None],
    depth: int,
    hint: str,
    path: str,
) -> str:
    """The members between the braces, in the order ``property_order`` asks for. ``extras``:
    the undeclared member rule, and one of which a member must be written (or None)."""
    lo, hi = bounds
    extra = extras[0]
    if conv.options.property_order == "any" and members and (len(members) > 1 or extra):
        states = any_order_states(len(members), lo, hi, extra is not None)
        if states <= MAX_ANY_ORDER_STATES:
            layout = (conv.layout.sep(conv.layout.depth(depth)), conv.layout.colon())
            return AnyOrder(conv.rules, members, extra, bounds, layout, hint).body()
        conv.unsupported(
            Unsupported(
                f"{len(members)} properties in any order need about {states} grammar rules "
                f"(limit {MAX_ANY_ORDER_STATES}: gs.limits.MAX_ANY_ORDER_STATES); "
                "property_order='schema' or strict=False compiles them in the schema's order",
                path,
            )
        )
    machine = _ObjectMachine(conv, members, extras, lo, hi, depth, hint)
    return machine.state(0, 0)


class _ObjectMachine:
    """Rule (i, k): members from declared property i on, k members (saturating) written."""

    def __init__(
        self,
        conv: SubschemaCompiler,
        members: list[Member],
        extras: tuple[str | None, str | None],
        lo: int,
        hi: int | None,
        depth: int,
        hint: str,
    ) -> None:
        self.conv = conv
        self.members = members
        # the undeclared member rule, and one that must be written (see _some_member_rule)
        self.extra, self.special = extras
        self.lo = lo
        self.hi = hi
        self.cap = hi if hi is not None else lo
        self.sep = conv.layout.sep(conv.layout.depth(depth))
        self.colon = conv.layout.colon()
        self.hint = hint
        self.cache: dict[tuple[int, int], str] = {}

    def state(self, i: int, k: int) -> str:
        if (i, k) in self.cache:
            return self.cache[(i, k)]
        body = self._body(i, k)
        if body in (NEVER, '""') or " " not in body:
            name = body
        else:
            name = self.conv.rules.add(f"{self.hint}-{i}-{k}", body)
        self.cache[(i, k)] = name
        return name

    def _body(self, i: int, k: int) -> str:
        if i == len(self.members):
            return self._tail(k)
        m = self.members[i]
        lead = f"{self.sep} " if k > 0 else ""
        take = NEVER
        if self.hi is None or k < self.hi:
            rest = self.state(i + 1, min(k + 1, self.cap))
            if rest != NEVER:
                take = f"{lead}{m.key} {self.colon} {m.value}" + (
                    "" if rest == '""' else f" {rest}"
                )
        skip = NEVER if m.required else self.state(i + 1, k)
        if take != NEVER and skip == '""':
            return f"({take})?"
        if take != NEVER and skip == rest and skip != NEVER:
            # One reference to the rest, not one per branch: a rest inlined into both branches
            # was built twice at every optional member.
            return f"({lead}{m.key} {self.colon} {m.value})? {rest}"
        return _alt(take, skip) if take != NEVER or skip != NEVER else NEVER

    def _tail(self, k: int) -> str:
        if self.special is not None:  # no property counts here: see _some_member_rule
            lead = f"{self.sep} " if k > 0 else ""
            if self.extra is None:
                return f"{lead}{self.special}"
            first = f"({self.sep} {self.extra})* " if k > 0 else f"({self.extra} {self.sep})* "
            return f"{first}{lead}{self.special} ({self.sep} {self.extra})*"
        need = max(0, self.lo - k)
        room = None if self.hi is None else self.hi - k
        if self.extra is None or room == 0:
            return '""' if need == 0 else NEVER
        if k > 0:
            return quantified(f"{self.sep} {self.extra}", need, room)
        tail = quantified(
            f"{self.sep} {self.extra}", max(0, need - 1), None if room is None else room - 1
        )
        one = f"{self.extra} {tail}" if tail != '""' else self.extra
        return one if need >= 1 else f"({one})?"


__all__ = ["array_rule", "object_rule"]
