"""``$ref`` resolution and ``allOf`` merging for the JSON Schema converter.

The document is copied once with every ``$ref`` made absolute (against the ``$id`` in effect), so
that later merges can move subschemas around freely. References resolve to local JSON pointers,
``$id`` URIs and ``$anchor`` names inside the document; anything else is a :class:`SchemaError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from ..errors import SchemaError
from ..limits import MAX_ANYOF_BRANCHES, MAX_ANYOF_PAIRS_READ
from .branch_pairs import compatible_pairs
from .document import plain_json
from .keywords import is_keyword
from .values import type_set, value_key

DEFAULT_BASE = "https://gbnf-sampler.invalid/schema.json"
# Keywords whose values are data, not schemas: never searched for $id / $ref.
DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples", "example"})
# Keywords whose value maps names to schemas.
NAME_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)


def escape_pointer(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _unescape_pointer(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


class Resolver:
    """Indexes a schema document and resolves absolute ``$ref`` URIs to (subschema, pointer).

    ``documents`` maps URIs to further schema documents that references may name (a registry;
    nothing is fetched). Pointers into them are written ``URI#/json/pointer``.
    """

    def __init__(self, root: Any, documents: Mapping[str, Any] | None = None) -> None:
        self.documents = dict(documents or {})
        self.roots: dict[str, Any] = {}
        self.by_uri: dict[str, tuple[Any, str]] = {}
        self.anchors: dict[str, tuple[Any, str]] = {}
        self.root = self._load("", root, DEFAULT_BASE)

    def _load(self, prefix: str, document: Any, base: str) -> Any:
        self.by_uri.setdefault(base, (None, prefix))
        self.roots[prefix] = self._absolutize(document, base, prefix)
        for table in (self.by_uri, self.anchors):
            for key, (_, ptr) in list(table.items()):
                table[key] = (self.at_pointer(ptr), ptr)
        return self.roots[prefix]

    def _external(self, doc: str) -> bool:
        for key in (doc, doc + ".json", doc.removesuffix(".json"), doc.rstrip("/")):
            if key in self.documents:
                self._load(doc + "#", plain_json(self.documents[key], "document"), doc)
                return True
        return False

    def _absolutize(self, node: Any, base: str, pointer: str, names: bool = False) -> Any:
        """A copy with absolute ``$ref``s. ``names``: ``node`` maps names to schemas (the value
        of ``properties``, ``$defs``...), so its keys are not keywords."""
        if isinstance(node, list):
            return [self._absolutize(v, base, f"{pointer}/{i}") for i, v in enumerate(node)]
        if not isinstance(node, dict):
            return node
        if names:
            return {
                k: self._absolutize(v, base, f"{pointer}/{escape_pointer(k)}")
                for k, v in node.items()
            }
        ident = node.get("$id", node.get("id") if isinstance(node.get("id"), str) else None)
        if isinstance(ident, str):
            if ident.startswith("#") and not ident.startswith("#/") and len(ident) > 1:
                self.anchors[base + ident] = (node, pointer)  # draft-6 style anchor id
            else:
                base = urldefrag(urljoin(base, ident))[0]
                self.by_uri.setdefault(base, (node, pointer))
        out: dict[str, Any] = {}
        for key, value in node.items():
            sub = f"{pointer}/{escape_pointer(key)}"
            if key in DATA_KEYWORDS:
                out[key] = value
            elif key in ("$ref", "$dynamicRef", "$recursiveRef") and isinstance(value, str):
                out[key] = urljoin(base, value)
            else:
                out[key] = self._absolutize(value, base, sub, key in NAME_MAPS)
        if isinstance(node.get("$anchor"), str):
            self.anchors[base + "#" + node["$anchor"]] = (out, pointer)
        return out

    def at_pointer(self, pointer: str) -> Any:
        if pointer == "" or pointer.startswith("/"):
            prefix, rest = "", pointer
        else:
            doc, _, rest = pointer.partition("#")
            prefix = doc + "#"
        node = self.roots[prefix]
        for token in rest.split("/")[1:]:
            token = _unescape_pointer(token)
            if isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            elif isinstance(node, dict) and token in node:
                node = node[token]
            else:
                raise KeyError(token)
        return node

    def resolve(self, uri: str, path: str) -> tuple[Any, str]:
        """The subschema a (absolute) ``$ref`` names, and its pointer in the document."""
        doc, frag = urldefrag(uri)
        if uri in self.anchors:
            return self.anchors[uri]
        if doc not in self.by_uri and not self._external(doc):
            raise SchemaError(
                f"cannot resolve $ref {uri!r} (not in the document or the given documents)",
                path,
            )
        _, base_ptr = self.by_uri[doc]
        if not frag:
            return self.by_uri[doc][0], base_ptr
        if not frag.startswith("/"):
            if f"{doc}#{frag}" in self.anchors:
                return self.anchors[f"{doc}#{frag}"]
            raise SchemaError(f"unknown anchor in $ref {uri!r}", path)
        pointer = base_ptr + "/".join(
            [""] + [escape_pointer(_unescape_pointer(unquote(t))) for t in frag.split("/")[1:]]
        )
        try:
            return self.at_pointer(pointer), pointer
        except KeyError:
            raise SchemaError(f"$ref {uri!r} points to nothing", path) from None


def normalize(schema: dict[str, Any]) -> dict[str, Any]:
    """Older spellings of keywords in their 2020-12 form."""
    out = dict(schema)
    if isinstance(out.get("items"), list):
        out["prefixItems"] = out.pop("items")
        if "additionalItems" in out:
            out["items"] = out.pop("additionalItems")
    out.pop("additionalItems", None)
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if out.get(exclusive) is True and bound in out:
            out[exclusive] = out.pop(bound)
        elif isinstance(out.get(exclusive), bool):
            out.pop(exclusive)
    if not isinstance(out.get("required", []), list):
        out.pop("required")
    if out.get("uniqueItems") is False:
        out.pop("uniqueItems")
    return out


# --- value helpers -------------------------------------------------------------------------------


def _type_value(types: set[str]) -> list[str]:
    if "number" in types:
        types = types - {"integer"}
    return sorted(types)


def _merge_types(a: dict[str, Any], b: dict[str, Any], out: dict[str, Any]) -> None:
    ta, tb = type_set(a), type_set(b)
    if ta is None and tb is None:
        return
    both = tb if ta is None else ta if tb is None else ta & tb
    out["type"] = _type_value(both or set())


def _merge_values(a: dict[str, Any], b: dict[str, Any], out: dict[str, Any]) -> None:
    sets = []
    for s in (a, b):
        if "const" in s:
            sets.append([s["const"]])
        if isinstance(s.get("enum"), list):
            sets.append(s["enum"])
    if not sets:
        return
    keys = set.intersection(*({value_key(v) for v in vs} for vs in sets))
    out.pop("const", None)
    out["enum"] = [v for v in sets[0] if value_key(v) in keys]


_MAXIMA = {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
_MINIMA = {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}


def _all_of(x: Any, y: Any) -> Any:
    if x is True or x == {}:
        return y
    if y is True or y == {} or x == y:
        return x
    # One flat list: merging a property n times must not nest it n deep (the analyses that
    # read it give up past a depth).
    return {"allOf": [*_conjuncts(x), *_conjuncts(y)]}


def _conjuncts(schema: Any) -> list[Any]:
    if isinstance(schema, dict) and len(schema) == 1 and isinstance(schema.get("allOf"), list):
        return list(schema["allOf"])
    return [schema]


def _merge_objects(a: dict[str, Any], b: dict[str, Any], out: dict[str, Any]) -> None:
    pa, pb = a.get("properties", {}), b.get("properties", {})
    if not (pa or pb or "additionalProperties" in a or "additionalProperties" in b):
        return
    props: dict[str, Any] = {}
    for name in list(pa) + [n for n in pb if n not in pa]:
        schema: Any = True
        for part, own in ((a, pa), (b, pb)):
            if name in own:
                schema = _all_of(schema, own[name])
            elif "additionalProperties" in part and not part.get("patternProperties"):
                schema = _all_of(schema, part["additionalProperties"])
        props[name] = schema
    out["properties"] = props
    if "additionalProperties" in a or "additionalProperties" in b:
        out["additionalProperties"] = _all_of(
            a.get("additionalProperties", True), b.get("additionalProperties", True)
        )


def _merge_keyword(
    key: str, va: Any, vb: Any, out: dict[str, Any], path: str, context: list[Any]
) -> None:
    """``out[key]`` for both values; ``context``: the two schemas merged (the facts that prune
    an ``anyOf`` product, see ``branch_pairs``)."""
    if key in _MAXIMA and not isinstance(va, bool) and not isinstance(vb, bool):
        out[key] = min(va, vb)
    elif key in _MINIMA and not isinstance(va, bool) and not isinstance(vb, bool):
        out[key] = max(va, vb)
    elif key == "required":
        out[key] = list(dict.fromkeys(list(va) + list(vb)))
    elif key in ("items", "propertyNames", "additionalItems"):
        out[key] = _all_of(va, vb)
    elif key == "patternProperties":
        merged = dict(va)
        for pat, sub in vb.items():
            merged[pat] = _all_of(merged[pat], sub) if pat in merged else sub
        out[key] = merged
    elif key == "prefixItems":
        n = max(len(va), len(vb))
        out[key] = [_all_of(_at(va, i), _at(vb, i)) for i in range(n)]
    elif key == "multipleOf" and isinstance(va, int) and isinstance(vb, int):
        out[key] = va * vb // math.gcd(va, vb)
    elif key in ("anyOf", "oneOf"):
        pairs = None
        if len(va) * len(vb) <= MAX_ANYOF_PAIRS_READ:
            pairs = compatible_pairs(va, vb, context)
        if pairs is None or len(pairs) > MAX_ANYOF_BRANCHES:
            # Reported. Relaxed, neither list is kept: the first alone may be the product of
            # many earlier ones, hundreds of branches (a grammar of megabytes).
            out.setdefault("__too_many__", []).append(key)
            out.pop(key)
        else:
            out[key] = [_all_of(x, y) for x, y in pairs] or [False]
    elif key == "__not_in__":
        out[key] = list(dict.fromkeys(list(va) + list(vb)))
    elif key in ("pattern", "format", "not"):
        out.setdefault("__" + key + "s__", [va]).append(vb)
    elif va != vb:
        out.setdefault("__conflicts__", []).append(key)


def _at(items: list[Any], i: int) -> Any:
    return items[i] if i < len(items) else True


def _own_contains_bounds(schema: dict[str, Any]) -> dict[str, Any]:
    """``minContains``/``maxContains`` bound only the schema's own ``contains`` (two different
    ``contains`` conflict, see ``_merge_keyword``; equal ones keep the tighter bounds): without
    it they are dropped, with it ``minContains`` is written out (default 1) before merging."""
    if "contains" in schema:
        return schema if "minContains" in schema else {**schema, "minContains": 1}
    if "minContains" in schema or "maxContains" in schema:
        return {k: v for k, v in schema.items() if k not in ("minContains", "maxContains")}
    return schema


def merge(a: Any, b: Any, path: str) -> Any:
    """The intersection of two schemas without ``allOf``/``$ref`` at the top (``False`` if empty).

    Keywords that do not combine exactly are collected under private ``__...__`` keys, which the
    converter reports as unsupported.
    """
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    a, b = _own_contains_bounds(a), _own_contains_bounds(b)
    # Annotations and unknown keys mean nothing: neither kept nor compared (two references
    # to one definition with different ``x-...`` notes are the same schema).
    out = {k: v for k, v in a.items() if is_keyword(k)}
    for key, vb in b.items():
        if not is_keyword(key) or key in ("type", "enum", "const", "properties"):
            continue
        if key in ("additionalProperties",) and ("properties" in a or "properties" in b):
            continue
        if key not in out:
            out[key] = vb
        elif key.startswith("__") and key.endswith("__"):
            out[key] = out[key] + vb
        else:
            _merge_keyword(key, out[key], vb, out, path, [a, b])
    _merge_types(a, b, out)
    _merge_values(a, b, out)
    _merge_objects(a, b, out)
    return out
