"""Shared by the SGLang and vLLM adapter tests and bench/engine_masks.py: importing an engine
(a test that cannot must say which and fail under ``CI=true``), real tokenizers rebuilt from
llama.cpp's vocab GGUFs, the requests replayed (kind, spec, document) and a greedy tokenization
of a document over the vocabulary's exact token bytes."""

from __future__ import annotations

import importlib
import json
import warnings
from functools import cache
from types import ModuleType
from typing import Any

import pytest

import gbnf_sampler as gs
from assets import in_ci, require, vocab_gguf
from mask_documents import SCHEMA_DOC

ENGINE_INSTALL = "see docs/notes/engines.md for the CPU install CI runs"

PERSON_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "email": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "address": {
            "type": "object",
            "properties": {
                "street": {"type": "string"},
                "city": {"type": "string"},
                "zip": {"type": ["string", "null"]},
            },
            "required": ["street", "city"],
        },
    },
    "required": ["name", "age", "email", "tags", "address"],
}

TOOL_TAG = {
    "structures": [
        {
            "begin": "<function=get_weather>",
            "schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
            "end": "</function>",
        }
    ],
    "triggers": ["<function="],
}

# (kind, spec, document): kinds of gbnf_sampler.engines; each document is in its language.
REQUESTS: list[tuple[str, str, str]] = [
    ("json", json.dumps(PERSON_SCHEMA), SCHEMA_DOC),
    ("json", "", '{"a": [1, 2.5, {"b": null}], "c": "d\\u00e9"}'),
    ("json_object", "", '{"ok": true}'),
    ("regex", r"\d{3}-[a-z]+(\.[a-z]+)*@example\.(org|com)", "123-ada.l@example.org"),
    ("gbnf", 'root ::= "SELECT " col (", " col)* " FROM t"\ncol ::= [a-z]+', "SELECT a, bc FROM t"),
    ("choice", json.dumps(["positive", "negative", "neutral"]), "neutral"),
    (
        "structural_tag",
        json.dumps(TOOL_TAG),
        'Let me check. <function=get_weather>{"city": "Paris"}</function> Done.',
    ),
]


def import_engine(module: str, package: str) -> ModuleType:
    """``import module``; when it fails, skip naming the package (fail under ``CI=true``)."""
    try:
        with warnings.catch_warnings():  # the engines' own deprecation warnings at import
            warnings.simplefilter("ignore")
            return importlib.import_module(module)
    except Exception as e:  # ImportError or an engine's own import-time failure
        message = f"{package} cannot be imported on this machine ({type(e).__name__}: {e})"
        if in_ci():
            pytest.fail(f"{message}; CI must install it ({ENGINE_INSTALL})")
        pytest.skip(f"{message}; {ENGINE_INSTALL}", allow_module_level=True)


@cache
def hf_tokenizer(name: str) -> Any:
    """A Hugging Face fast tokenizer rebuilt from llama.cpp's ``ggml-vocab-<name>.gguf``."""
    from gguf_metadata import read_metadata
    from hf_fixtures import tokenizer_from_gguf

    return tokenizer_from_gguf(read_metadata(require(lambda: vocab_gguf(name))))


def tokenize(vocab: gs.Vocab, text: str) -> list[int]:
    """Greedy longest-match tokenization over the vocabulary's exact bytes (special tokens
    excluded), so replays use multi-byte tokens such as ``":`` and `` true``."""
    table = _token_table(vocab)
    data = text.encode("utf-8")
    out, i = [], 0
    longest = vocab.max_token_length
    while i < len(data):
        for n in range(min(longest, len(data) - i), 0, -1):
            token = table.get(data[i : i + n])
            if token is not None:
                out.append(token)
                i += n
                break
        else:
            raise ValueError(f"no token for byte {data[i]:#x}")
    return out


@cache
def _token_table(vocab: gs.Vocab) -> dict[bytes, int]:
    special = set(vocab.special_ids) | set(vocab.eos_ids)
    table: dict[bytes, int] = {}
    for i, token in enumerate(vocab.tokens()):
        if token and i not in special:
            table.setdefault(token, i)
    return table


def replay_masks(compiled: gs.CompiledGrammar, tokens: list[int]) -> list[Any]:
    """The core's mask before each token and after the last (fresh matcher, numpy)."""
    matcher = gs.Matcher(compiled)
    masks = []
    for token in [*tokens, None]:
        row = gs.allocate_bitmask(1, compiled.vocab_size)
        matcher.fill_mask(row, 0)
        masks.append(row[0].copy())
        if token is not None:
            assert matcher.accept_token(token)
    return masks
