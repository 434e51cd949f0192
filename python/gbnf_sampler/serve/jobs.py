"""What the engine tracks per request (:class:`Job`, with the :class:`Event` stream it sends to
the asyncio side) and per sequence of the batched context (:class:`Slot`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import numpy as np

from ..matcher import Matcher
from ..structural.budget import BudgetTracker
from ..structural.formats import ReasoningBudget
from .drafts import SlotDraft
from .errors import ApiError
from .logprobs import RowStats, TokenLogprob
from .sampling import SamplingParams
from .text import TextStream


@dataclass
class Event:
    """What the decode thread tells a request: ``"text"`` (``text``), ``"done"``
    (``finish_reason``) or ``"error"`` (``error``)."""

    kind: str
    text: str = ""
    finish_reason: str | None = None
    error: ApiError | None = None
    logprobs: list[TokenLogprob] = field(default_factory=list)  # tokens since the last event


@dataclass
class Job:
    """One generation request as the engine sees it."""

    prompt: list[int]
    matcher: Matcher | None
    params: SamplingParams
    loop: asyncio.AbstractEventLoop
    budget: ReasoningBudget | None = None  # forced closing of the think section
    budget_tokens: list[int] = field(default_factory=list)  # budget.end, tokenized
    queue: asyncio.Queue[Event] = field(default_factory=asyncio.Queue)
    cancelled: bool = False
    ended: bool = False  # released by the asyncio side
    completion_tokens: int = 0
    forced_tokens: int = 0  # of completion_tokens, placed by the reasoning budget
    draft_tokens: int = 0  # jump-forward draft tokens evaluated
    kept_tokens: int = 0  # of those, kept (they are in completion_tokens)
    cached_tokens: int = 0
    logprobs: list[TokenLogprob] = field(default_factory=list)  # when params.logprobs
    created: float = field(default_factory=time.perf_counter)
    admitted: float = 0.0
    first_token: float = 0.0
    finished: float = 0.0

    def push(self, event: Event) -> None:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, event)
        except RuntimeError:  # the event loop is closed: nobody is listening any more
            self.cancelled = True

    async def events(self) -> AsyncIterator[Event]:
        """The job's events until it ends (the last one is ``done`` or ``error``)."""
        while True:
            event = await self.queue.get()
            yield event
            if event.kind != "text":
                return


@dataclass
class Slot:
    """A sequence of the context: the tokens in its KV cells, and the job using it."""

    seq: int
    cached: list[int] = field(default_factory=list)
    job: Job | None = None
    pending: list[int] = field(default_factory=list)  # prompt tokens not yet evaluated
    last: int | None = None  # sampled, not yet evaluated
    row: int = -1  # output row in the current batch
    rng: np.random.Generator | None = None
    text: TextStream = field(default_factory=TextStream)
    tracker: BudgetTracker | None = None
    draft: SlotDraft = field(default_factory=SlotDraft)
    stats: RowStats | None = None  # the output row's logits before the mask (logprobs)
    entry: TokenLogprob | None = None  # the sampled token's, until it is pushed
    unsent: list[TokenLogprob] = field(default_factory=list)  # pushed, text held back


__all__ = ["Event", "Job", "Slot"]
