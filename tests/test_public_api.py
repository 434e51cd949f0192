"""The public API the README and DESIGN.md promise keeps working: every ``gs.<name>`` chain the
README mentions resolves, the contract of DESIGN.md section 3 is importable, and the README's
limits table is the one generated from ``gs.limits``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import gbnf_sampler as gs

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
# gs.hf needs transformers only for LogitsProcessor, torch and transformers for the names that
# gs.hf.processor holds; gs.torch needs torch.
OPTIONAL: dict[str, tuple[str, ...]] = {
    "hf.LogitsProcessor": ("transformers",),
    "hf.tool_call_processor": ("torch", "transformers"),
    "hf.vocab_for": ("torch", "transformers"),
    "torch": ("torch",),
}


def _readme_chains() -> list[str]:
    chains = set(re.findall(r"\bgs\.([A-Za-z_][\w.]*[A-Za-z_0-9])", README))
    return sorted(chains)


@pytest.mark.parametrize("chain", _readme_chains())
def test_every_name_the_readme_uses_resolves(chain: str) -> None:
    for prefix, modules in OPTIONAL.items():
        if chain.startswith(prefix):
            for module in modules:
                pytest.importorskip(module)
    value: object = gs
    for part in chain.split("."):
        value = getattr(value, part)


def test_design_contract_names() -> None:
    for name in (
        "Grammar", "GrammarError", "Vocab", "compile", "CompiledGrammar", "Matcher",
        "allocate_bitmask", "apply_bitmask", "fill_masks", "accept_tokens", "SchemaError",
        "GrammarTooComplexError", "GrammarLimits", "limits", "llama",
    ):  # fmt: skip
        assert hasattr(gs, name), name
    for name in ("from_gbnf", "from_json_schema", "from_regex", "json", "from_choices"):
        assert callable(getattr(gs.Grammar, name))
    for name in ("from_llama", "from_gguf", "from_hf"):
        assert callable(getattr(gs.Vocab, name))
    for name in ("logits_processor", "sampler", "generate", "chat"):
        assert callable(getattr(gs.llama, name))
    from gbnf_sampler.json_schema import schema_to_gbnf  # the historical module name
    from gbnf_sampler.regex import regex_to_gbnf

    assert schema_to_gbnf({"type": "null"}).startswith("root ::=")
    assert regex_to_gbnf("a").startswith("root ::=")


def test_readme_limits_table_is_generated_from_gs_limits() -> None:
    table = gs.limits.markdown_table()
    assert table in README, "regenerate the README table with gs.limits.markdown_table()"


def test_every_limit_constant_is_named_once() -> None:
    package = REPO / "python" / "gbnf_sampler"
    names = [n for n in gs.limits.__all__ if n.isupper()]
    for path in package.rglob("*.py"):
        if path.name == "limits.py":
            continue
        text = path.read_text(encoding="utf-8")
        for name in names:
            assert not re.search(rf"^{name}\s*=", text, re.M), f"{name} redefined in {path}"
