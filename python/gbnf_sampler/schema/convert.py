"""The JSON Schema -> GBNF converter: schema walking, combinators, enums, arrays and objects.

Every subschema becomes a named rule (identical rules are shared); ``$ref`` targets get one rule
each, so recursive schemas give recursive grammars. ``value()`` returns the rule name, or None when
no JSON value satisfies the subschema.
"""

from __future__ import annotations

import contextlib
import json
import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import SchemaError
from ..limits import (
    MAX_ANY_ORDER_STATES,
    MAX_ANYOF_BRANCHES,
    MAX_REF_CHAIN,
    MAX_SCHEMA_LOGIC_DEPTH,
    MAX_SCHEMA_NESTING,
)
from ..regex import tree
from .any_order import AnyOrder, Member, any_order_states
from .branch_pairs import facts, forget_facts, pairwise_disjoint
from .containers import array_rule, key_literal, object_rule
from .context import Options
from .emit import Layout, Rules, any_value
from .instance import InstanceChecker
from .keyword_types import KeywordChecker
from .keywords import is_keyword, keywords_of
from .kinds import Cannot
from .logic import conditional_conjuncts
from .number_ranges import literal_number_gbnf
from .overlap import exclusive_alternatives
from .refs import Resolver, merge, normalize
from .scalars import (
    Unsupported,
    integer_rule,
    number_rule,
    pointer,
    string_rule,
)
from .values import type_set, value_key

NOT_A_SCHEMA = "a schema must be an object or a boolean"

# Keywords that cannot be compiled to a context-free grammar (or not exactly): SchemaError when
# strict, ignored with a SchemaWarning otherwise.
UNSUPPORTED = {
    "if": "if/then/else",
    "then": "if/then/else",
    "else": "if/then/else",
    "dependencies": "dependencies",
    "dependentSchemas": "dependentSchemas",
    "dependentRequired": "dependentRequired",
    "unevaluatedItems": "unevaluatedItems",
    "$dynamicRef": "$dynamicRef",
    "$recursiveRef": "$recursiveRef",
    "__conflicts__": "conflicting keywords under allOf",
    "__too_many__": f"anyOf/oneOf combinations (with allOf, if/then/else or dependencies) "
    f"above {MAX_ANYOF_BRANCHES} branches",
}
_HINT_SKIP = {
    "properties",
    "items",
    "prefixItems",
    "anyOf",
    "oneOf",
    "allOf",
    "$defs",
    "definitions",
    "additionalProperties",
    "patternProperties",
    "$ref",
    "not",
    "additionalItems",
}


class SchemaWarning(UserWarning):
    """A keyword that cannot be compiled exactly was relaxed (``strict=False``): the grammar
    accepts more than the schema there."""


def _hint(path: str) -> str:
    tokens = [t for t in path.split("/")[1:] if t not in _HINT_SKIP and not t.isdigit()]
    return tokens[-1].replace("~1", "-").replace("~0", "-") if tokens else "value"


class Converter:
    def __init__(self, root: Any, options: Options) -> None:
        self.options = options
        self.resolver = Resolver(root, options.documents)
        self.rules = Rules()
        self.layout = Layout(self.rules, options.whitespace, options.max_whitespace, options.indent)
        self.ref_rules: dict[tuple[str, int, bool], str | None] = {}
        self.merged_rules: dict[tuple[str, int, bool], str | None] = {}
        # id of a schema, reference chain, inside an analysis -> (the schema, its flat form)
        self.flat_schemas: dict[tuple[int, tuple[str, ...], bool], tuple[Any, Any]] = {}
        self.nesting = 0
        self.logic_depth = 0
        self.checker = KeywordChecker(self.options.strict)
        self.instances = InstanceChecker(self.resolve_target)
        self.checker.check(self.resolver.root, "")
        # Inside items kept distinct at run time: no spelling whose prefix can only become one
        # value (see plain_numbers).
        self.plain = False
        self.number_uses = 0  # number rules made or reused so far (see shared_rule)
        self.number_free: set[tuple[str, int, bool]] = set()

    def convert(self) -> str:
        try:
            expr = self.value(self.resolver.root, "", 0)
        finally:
            forget_facts()
        if expr is None:
            raise SchemaError("no JSON value satisfies the schema", "")
        return self.rules.text(expr)

    @contextlib.contextmanager
    def plain_numbers(self) -> Iterator[None]:
        """Numbers inside spelled without the forms whose prefix can only become one value (an
        integral multiple's zero fraction: ``4.`` is 4; an enum number's other spellings): items
        kept distinct at run time must be able to become new values until they end."""
        saved, self.plain = self.plain, True
        try:
            yield
        finally:
            self.plain = saved

    def unsupported(self, err: Unsupported) -> None:
        if self.options.strict:
            raise SchemaError(err.message, err.path)
        warnings.warn(f"{err.path or '/'}: {err.message} (relaxed)", SchemaWarning, stacklevel=5)

    # --- walking --------------------------------------------------------------------------------
    def value(self, schema: Any, path: str, depth: int) -> str | None:
        if schema is True or schema == {}:
            return any_value(self.rules, self.layout, depth)
        if schema is False:
            return None
        if not isinstance(schema, dict):
            self.unsupported(Unsupported(NOT_A_SCHEMA, path))
            return any_value(self.rules, self.layout, depth)
        ref = schema.get("$ref")
        if isinstance(ref, str) and not any(is_keyword(k) and k != "$ref" for k in schema):
            return self.ref(ref, path, depth)
        self.nesting += 1
        try:
            if self.nesting > MAX_SCHEMA_NESTING:
                raise SchemaError("schema nesting too deep (recursion through allOf/anyOf?)", path)
            candidates = self.enum_candidates(schema, 0)
            if candidates is not None:
                self.checker.check(schema, path)
                return self.checked_enum(candidates, schema, path, depth)
            flat = self.flatten(schema, path, ())
            if "$ref" in schema or "allOf" in schema:
                return self.merged_value(flat, path, depth)
            return self.flat_value(flat, path, depth)
        finally:
            self.nesting -= 1

    def merged_value(self, flat: Any, path: str, depth: int) -> str | None:
        """``flat_value`` for a schema built by merging; identical merged schemas share one
        rule, so recursion through ``allOf``/``$ref`` siblings gives a recursive grammar."""
        key = (json.dumps(flat, sort_keys=True, default=str), self.layout.depth(depth))
        return self.shared_rule(
            self.merged_rules, key, _hint(path), lambda: self.flat_value(flat, path, depth)
        )

    def shared_rule(
        self,
        cache: dict[tuple[str, int, bool], str | None],
        key: tuple[str, int],
        hint: str,
        build: Callable[[], str | None],
    ) -> str | None:
        """The rule ``cache`` holds for ``key`` (a schema at a layout depth), made by ``build``
        on first use. Entries are per number spelling (see :meth:`plain_numbers`), except
        that a rule whose making met no number serves both."""
        full = (*key, self.plain)
        other = (*key, not self.plain)
        if full not in cache and other in self.number_free:
            full = other
        if full in cache:
            if full not in self.number_free:
                self.number_uses += 1  # (or still being made: taken as meeting one)
            return cache[full]  # a rule still being built when the reference is recursive
        name = self.rules.reserve(hint)
        cache[full] = name
        before = self.number_uses
        expr = build()
        if self.number_uses == before:
            self.number_free.add(full)
        if expr is None:
            cache[full] = None
            self.rules.drop(name)
            return None
        self.rules.define(name, expr)
        return name

    def resolve_target(self, uri: str) -> Any:
        """The schema an absolute ``$ref`` names (LookupError when it names nothing known)."""
        try:
            return self.resolver.resolve(uri, "")[0]
        except SchemaError as err:
            raise LookupError(err.message) from None

    def resolve(self, uri: str, path: str) -> tuple[Any, str] | None:
        """``resolver.resolve``; a reference to nothing known is relaxed to ``{}`` (None)."""
        try:
            return self.resolver.resolve(uri, path)
        except SchemaError as err:
            if self.logic_depth:
                raise  # an analysis must not take an unknown schema for {}
            self.unsupported(Unsupported(err.message, err.path))
            return None

    def ref(self, uri: str, path: str, depth: int) -> str | None:
        found = self.resolve(uri, pointer(path, "$ref"))
        if found is None:
            return any_value(self.rules, self.layout, depth)
        target, ptr = found
        return self.shared_rule(
            self.ref_rules,
            (ptr, self.layout.depth(depth)),
            _hint(ptr) if ptr else "root-schema",
            lambda: self.value(target, ptr, depth),
        )

    def flatten(self, schema: Any, path: str, seen: tuple[str, ...]) -> Any:
        """``schema`` with its ``$ref`` and ``allOf`` merged in (a dict without them, or a bool).

        Made once per schema object (and reference chain, and analysis or not): the oneOf and
        negation analyses flatten the same subschemas again and again (Web types: 1.2 million
        calls for 75,000 distinct ones). The flat schemas are never modified in place. A
        relaxed keyword is reported where it is first met."""
        if not isinstance(schema, dict):
            if isinstance(schema, bool):
                return schema
            if self.logic_depth:
                raise Cannot(NOT_A_SCHEMA)  # an analysis gives up on a non-schema
            self.unsupported(Unsupported(NOT_A_SCHEMA, path))
            return True
        key = (id(schema), seen, self.logic_depth > 0)
        known = self.flat_schemas.get(key)
        if known is not None and known[0] is schema:  # (the entry keeps its schema alive)
            return known[1]
        flat = self.new_flat(schema, path, seen)
        self.flat_schemas[key] = (schema, flat)
        return flat

    def new_flat(self, schema: dict[str, Any], path: str, seen: tuple[str, ...]) -> Any:
        self.checker.check(schema, path)
        schema = normalize(schema)
        result: Any = {k: v for k, v in schema.items() if k not in ("$ref", "allOf")}
        found = None
        if isinstance(schema.get("$ref"), str):
            found = self.resolve(schema["$ref"], pointer(path, "$ref"))
        if found is not None:
            target, ptr = found
            if ptr in seen or len(seen) > MAX_REF_CHAIN:
                # relaxed (outside an analysis): the reference is left out, accepting more
                err = Unsupported("recursive $ref inside allOf cannot be merged", path)
                if self.logic_depth:
                    raise SchemaError(err.message, path)
                self.unsupported(err)
            else:
                result = merge(result, self.flatten(target, ptr, (*seen, ptr)), path)
        parts = schema.get("allOf", [])
        if not isinstance(parts, list):
            raise SchemaError("allOf must be an array", pointer(path, "allOf"))
        for i, part in enumerate(parts):
            result = merge(result, self.flatten(part, pointer(path, "allOf", i), seen), path)
        if isinstance(result, dict):
            result, conjuncts = conditional_conjuncts(result, self.logic_flatten)
            for extra in conjuncts:
                result = merge(result, self.flatten(extra, path, seen), path)
        return result

    def logic_flatten(self, schema: Any) -> Any:
        """``flatten`` for the schema analyses (negation, oneOf): errors become ``Cannot``."""
        self.logic_depth += 1
        try:
            if self.logic_depth > MAX_SCHEMA_LOGIC_DEPTH:
                raise Cannot("schema analysis nested too deep")
            return self.flatten(schema, "", ())
        except SchemaError as err:
            raise Cannot(err.message) from None
        finally:
            self.logic_depth -= 1

    def flat_value(self, flat: Any, path: str, depth: int) -> str | None:
        if flat is True or flat == {}:
            return any_value(self.rules, self.layout, depth)
        if flat is False:
            return None
        for key in ("anyOf", "oneOf"):
            if key in flat:
                return self.combinator(flat, key, path, depth)
        return self.typed(flat, path, depth)

    def combinator(self, flat: dict[str, Any], key: str, path: str, depth: int) -> str | None:
        branches = flat[key]
        if not isinstance(branches, list):
            raise SchemaError(f"{key} must be an array", pointer(path, key))
        rest = {k: v for k, v in flat.items() if k != key}
        meaningful = {k: v for k, v in rest.items() if is_keyword(k)}
        paths = [pointer(path, key, i) for i in range(len(branches))]
        own = branches
        if meaningful:
            branches = [
                merge(meaningful, self.flatten(b, sub, ()), sub)
                for b, sub in zip(branches, paths, strict=True)
            ]
        if key == "oneOf" and len(branches) > 1 and not pairwise_disjoint(branches):
            branches, paths = self.exclusive_branches(branches, own, path)
        exprs: list[str] = []
        for branch, sub in zip(branches, paths, strict=True):
            if meaningful and isinstance(branch, dict):
                if facts(branch).impossible():
                    continue  # e.g. an enum branch that the sibling enum excludes: no rule
                expr = self.merged_value(self.flatten(branch, sub, ()), sub, depth)
            else:
                expr = self.value(branch, sub, depth)
            if expr is not None and expr not in exprs:
                exprs.append(expr)
        if not exprs:
            return None
        return self.rules.add(_hint(path), " | ".join(exprs))

    def exclusive_branches(
        self, branches: list[Any], own: list[Any], path: str
    ) -> tuple[list[Any], list[str]]:
        """oneOf branches rewritten to be pairwise disjoint (exact: see ``overlap``);
        when that fails, SchemaError (strict) or the branches as they are (anyOf, relaxed)."""
        found = exclusive_alternatives(branches, self.logic_flatten, own)
        if found is None:
            self.unsupported(
                Unsupported(
                    "oneOf branches may overlap and cannot be made exclusive (a value matching "
                    "two branches would be accepted); strict=False compiles it as anyOf",
                    pointer(path, "oneOf"),
                )
            )
            return branches, [pointer(path, "oneOf", i) for i in range(len(branches))]
        return found, [pointer(path, "oneOf", i) for i in range(len(found))]

    # --- typed values ---------------------------------------------------------------------------
    def typed(self, flat: dict[str, Any], path: str, depth: int) -> str | None:
        flat = self.check_keywords(flat, path)
        if "const" in flat or "enum" in flat:
            return self.enum(flat, path, depth)
        types = type_set(flat)
        if types is None:
            types = {"null", "boolean", "object", "array", "number", "integer", "string"}
        types = self.apply_not(flat, types, path)
        hint = _hint(path)
        exprs: list[str] = []
        for t in ("object", "array", "string", "number", "integer", "boolean", "null"):
            if t not in types or (t == "integer" and "number" in types):
                continue
            expr = self.relaxed_type_rule(t, flat, path, depth, hint)
            if expr is not None:
                exprs.append(expr)
        if not exprs:
            return None
        return exprs[0] if len(exprs) == 1 else self.rules.add(hint, " | ".join(exprs))

    def relaxed_type_rule(
        self, t: str, flat: dict[str, Any], path: str, depth: int, hint: str
    ) -> str | None:
        """``type_rule``, dropping (strict=False) each keyword it cannot compile."""
        for _ in range(len(flat) + 1):
            try:
                return self.type_rule(t, flat, path, depth, hint)
            except Unsupported as err:
                self.unsupported(err)
                smaller = _without(flat, err.path, path)
                if smaller == flat:
                    raise SchemaError(err.message, err.path) from None
                flat = smaller
        raise SchemaError("cannot relax the schema", path)

    def type_rule(
        self, t: str, flat: dict[str, Any], path: str, depth: int, hint: str
    ) -> str | None:
        if t == "null":
            return '"null"'
        if t == "boolean":
            return self.rules.fixed("boolean", '"true" | "false"')
        if t == "string":
            return string_rule(self.rules, flat, path, hint)
        if t == "integer":
            if flat.get("__non_integral__"):
                return None  # a negated integer type met with an integer one
            self.number_uses += 1
            # Plain digits only: 1.0 is an integer from draft 6 on, but a generated 1.0 reads as
            # a float in most languages (and after "1." a model finds only zeros allowed).
            return integer_rule(self.rules, flat, path, hint, False, self.plain)
        if t == "number":
            self.number_uses += 1
            return number_rule(self.rules, flat, path, hint, self.plain)
        if t == "array":
            return self.array(flat, path, depth)
        return self.object(flat, path, depth)

    def check_keywords(self, flat: dict[str, Any], path: str) -> dict[str, Any]:
        out = dict(flat)
        for key in list(out):
            if key in UNSUPPORTED:
                what = UNSUPPORTED[key]
                if key == "__conflicts__":
                    what += f" ({', '.join(sorted(set(map(str, out[key]))))})"
                where = path if key.startswith("__") else pointer(path, key)
                err = Unsupported(f"{what} cannot be expressed as a grammar", where)
                self.unsupported(err)
                out.pop(key)
        return out

    def apply_not(self, flat: dict[str, Any], types: set[str], path: str) -> set[str]:
        nots = flat.get("__nots__", [flat["not"]] if "not" in flat else [])
        for i, neg in enumerate(nots):
            if isinstance(neg, dict) and keywords_of(neg) == {"type"}:
                excluded = type_set(neg) or set()
                types = types - excluded
                if "integer" in excluded and "number" in types:
                    self.unsupported(Unsupported("not: integer under type number", path))
            elif neg == {} or neg is True:
                return set()
            else:
                sub = pointer(path, "not") if "not" in flat else pointer(path, "allOf", i)
                self.unsupported(
                    Unsupported(
                        "not (beyond excluding types) cannot be expressed as a grammar", sub
                    )
                )
        return types

    # --- enum / const ---------------------------------------------------------------------------
    def enum(self, flat: dict[str, Any], path: str, depth: int) -> str | None:
        values = [flat["const"]] if "const" in flat else flat["enum"]
        if not isinstance(values, list):
            raise SchemaError("enum must be an array", pointer(path, "enum"))
        return self.checked_enum(values, flat, path, depth)

    def enum_candidates(self, schema: Any, hops: int) -> list[Any] | None:
        """The values of the first ``const``/``enum`` that ``schema`` itself, its ``allOf``
        parts or its ``$ref`` target require (None: no such list)."""
        if not isinstance(schema, dict) or hops > MAX_REF_CHAIN:
            return None
        if "const" in schema:
            return [schema["const"]]
        if isinstance(schema.get("enum"), list):
            return list(schema["enum"])
        parts = schema["allOf"] if isinstance(schema.get("allOf"), list) else []
        for part in parts:
            found = self.enum_candidates(part, hops + 1)
            if found is not None:
                return found
        if isinstance(schema.get("$ref"), str):
            try:
                target = self.resolver.resolve(schema["$ref"], path="")[0]
            except SchemaError:
                return None
            return self.enum_candidates(target, hops + 1)
        return None

    def checked_enum(self, values: list[Any], schema: Any, path: str, depth: int) -> str | None:
        """The literals of the values that satisfy ``schema`` (each checked exactly; a value
        that cannot be checked is reported, never silently dropped)."""
        seen: set[str] = set()
        exprs: list[str] = []
        for v in values:
            key = value_key(v)
            if key in seen:
                continue
            seen.add(key)
            verdict = self.instances.check(v, schema)
            if verdict is None:
                self.unsupported(
                    Unsupported(
                        f"cannot decide whether the enum/const value {json.dumps(v)[:60]} "
                        "satisfies the schema's other keywords (a pattern Python and ECMA-262 "
                        "read differently, a format compiled approximately, an unresolvable "
                        "$ref...); strict=False keeps it",
                        path,
                    )
                )
            if verdict is not False:
                exprs.append(self.literal_value(v, depth))
        if not exprs:
            return None
        return self.rules.add(_hint(path), " | ".join(exprs))

    def literal_value(self, v: Any, depth: int) -> str:
        d = self.layout.depth(depth)
        if isinstance(v, str):
            forms = dict.fromkeys([json.dumps(v, ensure_ascii=False), json.dumps(v)])
            return "(" + " | ".join(tree.literal_gbnf(f) for f in forms) + ")"
        if isinstance(v, bool) or v is None:
            return tree.literal_gbnf(json.dumps(v))
        if isinstance(v, (int, float)):
            self.number_uses += 1
            if self.plain and math.isfinite(v):  # one spelling (see plain_numbers)
                return tree.literal_gbnf(str(int(v)) if v == int(v) else json.dumps(v))
            return literal_number_gbnf(v)
        sep, lay = self.layout.sep(d), self.layout
        if isinstance(v, list):
            if not v:
                return lay.empty("[]")
            items = f" {sep} ".join(self.literal_value(x, depth + 1) for x in v)
            return f"{lay.open('[', d)} {items} {lay.close(']', d)}"
        if isinstance(v, dict):
            if not v:
                return lay.empty("{}")
            if self.options.property_order == "any" and len(v) > 1:
                return self.literal_object(v, depth)
            return self.ordered_object(v, depth)
        raise SchemaError(f"enum/const value {v!r} is not JSON", "")

    def ordered_object(self, v: dict[str, Any], depth: int) -> str:
        """An ``enum``/``const`` object with its members in its own order."""
        d = self.layout.depth(depth)
        lay = self.layout
        members = f" {lay.sep(d)} ".join(
            f"{self.literal_value(k, depth + 1)} {lay.colon()} {self.literal_value(x, depth + 1)}"
            for k, x in v.items()
        )
        return f"{lay.open('{', d)} {members} {lay.close('}', d)}"

    def literal_object(self, v: dict[str, Any], depth: int) -> str:
        """An ``enum``/``const`` object with its members in any order (``property_order``)."""
        d = self.layout.depth(depth)
        members = [
            Member(key_literal(k), self.literal_value(x, depth + 1), True) for k, x in v.items()
        ]
        if any_order_states(len(members), 1, None, False) > MAX_ANY_ORDER_STATES:
            self.unsupported(
                Unsupported(
                    f"an enum/const object of {len(v)} members in any order needs more than "
                    f"{MAX_ANY_ORDER_STATES} grammar rules (gs.limits.MAX_ANY_ORDER_STATES); "
                    "strict=False keeps its own order",
                    "",
                )
            )
            return self.ordered_object(v, depth)
        layout = (self.layout.sep(d), self.layout.colon())
        body = AnyOrder(self.rules, members, None, (1, None), layout, "const-object").body()
        return f"{self.layout.open('{', d)} {body} {self.layout.close('}', d)}"

    # --- arrays and objects (see containers) -------------------------------------------
    def array(self, flat: dict[str, Any], path: str, depth: int) -> str | None:
        return array_rule(self, flat, path, depth)

    def object(self, flat: dict[str, Any], path: str, depth: int) -> str | None:
        return object_rule(self, flat, path, depth)


def _without(flat: dict[str, Any], err_path: str, path: str) -> dict[str, Any]:
    """``flat`` without the keyword an Unsupported error pointed at (for strict=False)."""
    key = err_path[len(path) + 1 :].split("/")[0] if err_path.startswith(path + "/") else ""
    out = {k: v for k, v in flat.items() if k != key}
    if key in ("pattern", "format"):
        out.pop(f"__{key}s__", None)
        out.pop("minLength", None)
        out.pop("maxLength", None)
    if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        out.pop("multipleOf", None)
    # Keys that the dropped keyword described would otherwise fall to the "additional" schema,
    # which may be stricter (false): the relaxed grammar must only ever accept more, so any
    # extra key becomes allowed (an explicit true, so that the option
    # ``additional_properties=False`` does not forbid them either).
    if key in ("properties", "patternProperties"):
        out["additionalProperties"] = True
        out.pop("unevaluatedProperties", None)
    return out
