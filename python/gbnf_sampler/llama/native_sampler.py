"""The native llama.cpp sampler: apply and accept run in C++, no Python per token.

The function table (``llama_sampler_i``) is built from llama-cpp-python's own ctypes types, so
its layout always matches the llama.cpp that llama-cpp-python was built with; its entries point
at plain C functions of our extension. llama.cpp's ``llama_sampler_init`` creates the sampler.
"""

from __future__ import annotations

import contextlib
import ctypes
from typing import Any

from .. import _core
from ..matcher import Matcher
from .compiled import matcher_for

_IFACE: Any = None  # one function table for the whole process, never freed


def _function_table() -> Any:
    global _IFACE
    if _IFACE is None:
        import llama_cpp

        addresses = _core.llama_hook_functions()
        iface = llama_cpp.llama_sampler_i()
        iface.name = llama_cpp.llama_sampler_i_name(addresses["name"])
        iface.accept = llama_cpp.llama_sampler_i_accept(addresses["accept"])
        iface.apply = llama_cpp.llama_sampler_i_apply(addresses["apply"])
        iface.reset = llama_cpp.llama_sampler_i_reset(addresses["reset"])
        iface.clone = llama_cpp.llama_sampler_i_clone(addresses["clone"])
        iface.free = llama_cpp.llama_sampler_i_free(addresses["free"])
        _IFACE = iface
    return _IFACE


def _llama_function_address(name: str) -> int:
    import llama_cpp

    address = ctypes.cast(getattr(llama_cpp.llama_cpp._lib, name), ctypes.c_void_p).value
    if not address:
        raise RuntimeError(f"{name} not found in llama-cpp-python's library")
    return int(address)


def _llama_sampler_init_address() -> int:
    return _llama_function_address("llama_sampler_init")


def address_of(pointer: Any) -> int:
    """The address a ctypes pointer (a llama_sampler chain, a llama_context) holds."""
    value = ctypes.cast(pointer, ctypes.c_void_p).value
    if not value:
        raise ValueError("null pointer")
    return int(value)


class GrammarSampler:
    """A ``llama_sampler`` constraining generation to a grammar.

    Put it first in a sampler chain with :meth:`add_to` (the chain then owns and frees it), or
    use :attr:`pointer` with llama.cpp's API directly and call :meth:`close` when done.
    """

    def __init__(self, matcher: Matcher) -> None:
        import llama_cpp

        iface = _function_table()
        self._context = _core._unsafe_new_sampler_context(
            matcher._core, _llama_sampler_init_address(), ctypes.addressof(iface)
        )
        pointer = llama_cpp.llama_sampler_init(ctypes.byref(iface), ctypes.c_void_p(self._context))
        if not pointer:
            _core._unsafe_destroy_sampler_context(self._context)
            raise RuntimeError("llama_sampler_init failed")
        self.pointer = pointer
        self._owned = True
        self._sample_api = tuple(
            _llama_function_address(name)
            for name in ("llama_get_logits_ith", "llama_sampler_apply", "llama_sampler_accept")
        )

    def add_to(self, chain: Any) -> None:
        """Appends the sampler to a ``llama_sampler_chain``; the chain frees it."""
        import llama_cpp

        self._check_open()
        llama_cpp.llama_sampler_chain_add(chain, self.pointer)
        self._owned = False

    def _check_open(self) -> None:
        if self.pointer is None:
            raise RuntimeError("the sampler was closed")

    @property
    def error(self) -> str:
        """Why the constraint failed (empty while all is well)."""
        self._check_open()
        return str(_core._unsafe_sampler_error(self._context))

    def forced_bytes(self) -> bytes:
        self._check_open()
        return bytes(_core._unsafe_sampler_forced_bytes(self._context))

    def acceptable_prefix(self, tokens: list[int]) -> int:
        """How many leading ``tokens`` the grammar accepts from the current state."""
        self._check_open()
        return int(_core._unsafe_sampler_acceptable_prefix(self._context, tokens))

    def sample(self, chain: int, context: int, row: int) -> int:
        """``llama_sampler_sample(chain, context, row)`` for a chain (address) whose first
        sampler is this one: the same token, drawn the same way, from a candidate array of the
        allowed tokens only instead of the whole vocabulary. -1 when the constraint failed
        (:attr:`error` says why)."""
        self._check_open()
        get_logits, apply, accept = self._sample_api
        return int(
            _core._unsafe_sampler_sample(
                self._context, get_logits, apply, accept, context, row, chain
            )
        )

    def allowed_count(self) -> int:
        """How many tokens the grammar allows now (0 when the constraint failed). Fills the
        mask the next sampling step uses: asking costs nothing extra."""
        self._check_open()
        return int(_core._unsafe_sampler_allowed_count(self._context))

    def plan_draft(self, tokens: list[int]) -> list[bool]:
        """The acceptable prefix of ``tokens`` (as :meth:`acceptable_prefix`), one flag per
        token: True where the token is the only one the grammar allows at its position."""
        self._check_open()
        return list(_core._unsafe_sampler_plan_draft(self._context, tokens))

    def is_terminated(self) -> bool:
        self._check_open()
        return bool(_core._unsafe_sampler_is_terminated(self._context))

    def close(self) -> None:
        """Frees the sampler if no chain owns it."""
        import llama_cpp

        if self.pointer is not None and self._owned:
            llama_cpp.llama_sampler_free(self.pointer)
        self.pointer = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


def sampler(llm: Any, grammar: Any) -> GrammarSampler:
    """A native llama.cpp sampler (:class:`GrammarSampler`) for ``grammar``: add it first in a
    ``llama_sampler_chain``; its apply and accept run in C++."""
    return GrammarSampler(matcher_for(llm, grammar))


__all__ = ["GrammarSampler", "address_of", "sampler"]
