from __future__ import annotations

from ..grammar import Grammar
from .findings import Finding


def check_llama_cpp(text: str, grammar: Grammar) -> list[Finding]:
    return []
