"""Resource limits of the grammar front end (defaults come from the C++ core)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from . import _core

_CORE_DEFAULTS = _core.GrammarLimits()


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
                    f"GrammarLimits.{f.name} must be an int, got {type(value).__name__} "
                    f"({value!r})"
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


__all__ = ["GrammarLimits"]
