"""Jump-forward in the batched engine: grammar-drafted speculation, one draft per sequence.

When a sequence's grammar forces the next bytes, their tokens are a draft, extended by text
guessed from the job's context where the grammar accepts it
(:func:`~gbnf_sampler.llama.speculative.plan_draft`). The draft goes into the step's batch
after the sequence's sampled token, with a row of logits for every draft token the grammar does
not force alone and for the row after the draft. While llama.cpp decodes,
:func:`fill_draft_masks` fills the mask of each of those rows: the matcher accepts the draft
token by token and the rows at equal depth of every sequence are filled together. The engine
then checks each draft token against its own sampler's pick from the masked row, as in
:mod:`gbnf_sampler.llama.speculative`: the draft token is kept only when the pick is the draft
token, so every output token is distributed exactly as in plain constrained sampling. At the
first miss the matcher is rolled back to the kept prefix and the sequence's KV cells after it
are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..llama.lookup import ContextLookup
from ..llama.speculative import Draft, DraftLength
from ..matcher import Matcher, fill_masks
from ..structural.budget import BudgetTracker


@dataclass
class SlotDraft:
    """A sequence's draft in the current batch. ``rows[j]`` is the output row whose logits
    predict draft token j (-1: the grammar allows that token alone, no logits), ``rows[-1]`` the
    row after the draft; ``accepted`` counts the draft tokens its matcher has accepted."""

    draft: Draft = field(default_factory=Draft)
    rows: list[int] = field(default_factory=list)
    accepted: int = 0
    planned: Draft = field(default_factory=Draft)  # before the cut by DraftLength
    length: DraftLength = field(default_factory=DraftLength)
    lookup: ContextLookup | None = None  # the job's text so far, for guesses past forced text

    def clear(self) -> None:
        self.draft, self.rows, self.accepted, self.planned = Draft(), [], 0, Draft()


def may_draft(matcher: Matcher | None, tracker: BudgetTracker | None) -> bool:
    """Drafts only under a grammar, and not while a reasoning budget may still force its
    closing text (that check runs after every token, and a draft would skip it)."""
    return matcher is not None and (tracker is None or tracker.closed)


def _step_at(matcher: Matcher, slot: SlotDraft, depth: int) -> int:
    """Moves the matcher to ``depth`` draft tokens accepted; the row to fill there (-1: none)."""
    if depth > 0:
        token = slot.draft.tokens[depth - 1]
        if not matcher.accept_token(token):
            raise RuntimeError(f"the grammar refused draft token {token} it had planned")
        slot.accepted = depth
    return slot.rows[depth]


def fill_draft_masks(matchers: list[Matcher], drafts: list[SlotDraft], bitmask: np.ndarray) -> None:
    """Fills, for each sequence, the mask rows of its draft (``rows``; a sequence without a
    draft has the one row of its sampled token), leaving each matcher after its whole draft.
    The rows at one depth are filled in one batch."""
    deepest = max((len(d.draft) for d in drafts), default=0)
    for depth in range(deepest + 1):
        batch: list[Matcher] = []
        rows: list[int] = []
        for matcher, slot in zip(matchers, drafts, strict=True):
            if depth <= len(slot.draft):
                row = _step_at(matcher, slot, depth)
                if row >= 0:
                    batch.append(matcher)
                    rows.append(row)
        if batch:
            fill_masks(batch, bitmask, rows)


def fill_one(matcher: Matcher, slot: SlotDraft, bitmask: np.ndarray) -> None:
    """:func:`fill_draft_masks` for one sequence, from its state before the draft (after a
    batched fill failed part-way: the matcher is rolled back first)."""
    matcher.rollback(slot.accepted)
    slot.accepted = 0
    for depth in range(len(slot.draft) + 1):
        row = _step_at(matcher, slot, depth)
        if row >= 0:
            matcher.fill_mask(bitmask, row)


__all__ = ["SlotDraft", "fill_draft_masks", "fill_one", "may_draft"]
