"""llama-cpp-python integration: a drop-in logits processor.

    import gbnf_sampler as gs
    out = llm(prompt, logits_processor=gs.llama.logits_processor(llm, grammar))

``grammar`` may be a :class:`Grammar`, GBNF text, a JSON Schema dict or a Pydantic model class.
llama-cpp-python is imported lazily, so the rest of the package works without it.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import numpy.typing as npt

from ..kernels import allocate_bitmask, apply_bitmask
from ..matcher import Matcher
from .compiled import compiled_for

logger = logging.getLogger(__name__)


class GrammarLogitsProcessor:
    """Masks the logits llama-cpp-python hands to a logits processor so that only tokens that
    keep the output inside the grammar stay possible (EOS exactly when the output may end).

    It follows the sequence through ``input_ids``: the tokens present at the first call are the
    prompt; each later call brings the tokens sampled since. When ``input_ids`` stops extending
    what it saw (a new generation with the same processor, or a cached prefix that was cut), it
    rolls the matcher back to the common prefix, or resets it for a new prompt.
    """

    def __init__(self, llm: Any, grammar: Any) -> None:
        self._compiled = compiled_for(llm, grammar)
        self._matcher = Matcher(self._compiled)
        self._vocab_size = int(llm.n_vocab())
        self._bitmask = allocate_bitmask(1, self._vocab_size)[0]
        self._seen: npt.NDArray[np.intc] = np.empty(0, dtype=np.intc)  # input_ids last call
        self._prompt_len = -1  # -1: no call yet

    @property
    def matcher(self) -> Any:
        return self._matcher

    def reset(self) -> None:
        """Forget the current sequence; the next call starts a new generation."""
        self._matcher.reset()
        self._seen = np.empty(0, dtype=np.intc)
        self._prompt_len = -1

    def _common_prefix(self, ids: npt.NDArray[np.intc]) -> int:
        n = min(len(ids), len(self._seen))
        if n == 0:
            return 0
        diff = np.flatnonzero(ids[:n] != self._seen[:n])
        return int(diff[0]) if len(diff) else n

    def _start(self, ids: npt.NDArray[np.intc]) -> None:
        self._matcher.reset()
        self._prompt_len = len(ids)
        self._seen = ids.copy()

    def _sync(self, ids: npt.NDArray[np.intc]) -> None:
        """Brings the matcher to the state after ``ids[prompt_len:]``."""
        if self._prompt_len < 0:
            self._start(ids)
            return
        common = self._common_prefix(ids)
        if common < self._prompt_len:
            logger.debug("input_ids no longer start with the prompt: new generation")
            self._start(ids)
            return
        accepted = len(self._seen) - self._prompt_len
        keep = common - self._prompt_len
        if keep < accepted:
            undo = accepted - keep
            try:
                self._matcher.rollback(undo)
            except ValueError:
                self._matcher.reset()
                if not all(
                    self._matcher.accept_token(int(t)) for t in ids[self._prompt_len : common]
                ):
                    self._start(ids)
                    return
        for position in range(common, len(ids)):
            if not self._matcher.accept_token(int(ids[position])):
                # Not a continuation of this grammar's output: a new generation whose prompt
                # happens to extend the old sequence.
                logger.debug("token %d at %d refused: new generation", ids[position], position)
                self._start(ids)
                return
        self._seen = ids.copy()

    def __call__(
        self, input_ids: npt.NDArray[np.intc], scores: npt.NDArray[np.single]
    ) -> npt.NDArray[np.single]:
        self._sync(np.asarray(input_ids, dtype=np.intc))
        self._matcher.fill_mask(self._bitmask)
        apply_bitmask(scores, self._bitmask, vocab_size=self._vocab_size)
        return scores


def logits_processor(llm: Any, grammar: Any) -> Any:
    """A ``llama_cpp.LogitsProcessorList`` holding one :class:`GrammarLogitsProcessor`."""
    import llama_cpp  # optional dependency, loaded on first use

    return llama_cpp.LogitsProcessorList([GrammarLogitsProcessor(llm, grammar)])


__all__ = ["GrammarLogitsProcessor", "logits_processor"]
