"""The batched decoding engine: one llama.cpp context, ``parallel`` slots, one decode thread.

Requests come from the asyncio side as :class:`Job` objects. Their grammars are compiled and
their prompts tokenized on thread pools (:meth:`Engine.prepare`), so a request with a big schema
never holds up the others: it joins the ready queue only when its matcher exists. The decode
thread owns the context. Each step it

1. drops cancelled jobs (a disconnected client: its sequence's KV cells are cleared at once),
2. admits ready jobs into free slots (the free slot whose cached tokens share the longest
   prefix with the new prompt; that prefix is kept, the rest of the sequence is dropped),
3. puts every active sequence into one ``llama_batch`` (the last sampled token of each
   generating sequence, a chunk of each prompt still being evaluated),
4. fills the masks of all constrained sequences with :func:`gs.fill_masks` into one bitmask
   while ``llama_decode`` runs (both release the GIL), applies them with
   :func:`gs.apply_bitmask` to the logits rows, samples each row with its request's settings
   and advances each grammar over its token,
5. streams each new token's text to its request's asyncio queue.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..compiled import compile
from ..errors import GbnfSamplerError
from ..grammar import Grammar
from ..kernels import allocate_bitmask, apply_bitmask
from ..limits import DEFAULT_MAX_STATE_SIZE
from ..matcher import Matcher, fill_masks
from ..vocab import Vocab
from .context import BatchContext
from .errors import ApiError, from_constraint_error
from .sampling import SamplingParams, sample
from .text import TextStream

logger = logging.getLogger(__name__)

CompileHook = Callable[[str, Any], None]


@dataclass
class Event:
    """What the decode thread tells a request: ``"text"`` (``text``), ``"done"``
    (``finish_reason``) or ``"error"`` (``error``)."""

    kind: str
    text: str = ""
    finish_reason: str | None = None
    error: ApiError | None = None


@dataclass
class Job:
    """One generation request as the engine sees it."""

    prompt: list[int]
    matcher: Matcher | None
    params: SamplingParams
    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[Event] = field(default_factory=asyncio.Queue)
    cancelled: bool = False
    ended: bool = False  # released by the asyncio side
    completion_tokens: int = 0
    cached_tokens: int = 0
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


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class Engine:
    """Owns the model's batched context and the decode thread (see the module docstring)."""

    def __init__(
        self,
        llm: Any,
        vocab: Vocab,
        parallel: int,
        ctx: int,
        queue: int,
        threads: int | None = None,
    ) -> None:
        if parallel < 1 or queue < 0 or ctx < 16:
            raise ValueError(
                f"need parallel >= 1, queue >= 0, ctx >= 16; got {parallel}, {queue}, {ctx}"
            )
        self.llm = llm
        self.vocab = vocab
        self.context = BatchContext(llm, parallel, ctx, threads)
        if vocab.size != self.context.n_vocab:
            raise ValueError(
                f"vocabulary has {vocab.size} tokens, the model {self.context.n_vocab}"
            )
        self.slots = [Slot(i) for i in range(parallel)]
        self.limit = parallel + queue
        self.outstanding = 0
        self.ready: deque[Job] = deque()
        self.cond = threading.Condition()
        self.stopping = False
        self.compile_hook: CompileHook | None = None  # tests: called before each compile
        self.max_state_size = DEFAULT_MAX_STATE_SIZE  # gs.compile's parser-state limit
        self.compile_pool = ThreadPoolExecutor(4, thread_name_prefix="gbnf-serve-compile")
        self.token_pool = ThreadPoolExecutor(1, thread_name_prefix="gbnf-serve-tokenize")
        self.mask_pool = ThreadPoolExecutor(1, thread_name_prefix="gbnf-serve-mask")
        self.masks = allocate_bitmask(parallel, vocab.size)
        self.full_masks = allocate_bitmask(parallel, vocab.size)
        self.scratch = allocate_bitmask(1, vocab.size)
        self.eos = np.asarray(sorted(set(vocab.eos_ids)), dtype=np.int64)
        self.eos_clear = (~np.left_shift(np.int64(1), self.eos % 32)).astype(np.int32)
        self.steps = 0  # decode calls so far
        self.cancelled = 0  # jobs dropped because their client went away
        self.thread = threading.Thread(target=self._run, name="gbnf-serve-decode", daemon=True)
        # The first grammar compiled for a vocabulary also builds the vocabulary's own tables
        # (~0.1 s on a 262k vocabulary): done now, not in the first request's time to first token.
        compile(Grammar.from_gbnf('root ::= "warm-up"'), vocab)

    # ---- the asyncio side ---------------------------------------------------------------

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        self.thread.join(timeout=30)
        self.compile_pool.shutdown(wait=False, cancel_futures=True)
        self.token_pool.shutdown(wait=False, cancel_futures=True)
        self.mask_pool.shutdown(wait=False)
        if not self.thread.is_alive():
            self.context.close()

    def reserve(self) -> None:
        """Counts a request in, or raises the 429 when slots and queue are all taken."""
        with self.cond:
            if self.outstanding >= self.limit:
                raise ApiError(
                    429,
                    f"the server is busy: {len(self.slots)} slots and the queue of "
                    f"{self.limit - len(self.slots)} are full; retry later",
                    type="server_busy",
                    code="queue_full",
                )
            self.outstanding += 1

    def release(self) -> None:
        with self.cond:
            self.outstanding -= 1

    async def prepare(
        self, prompt: str, param: str | None, spec: Any, build: Callable[[], Grammar | None] | None
    ) -> tuple[list[int], Matcher | None]:
        """Tokenizes ``prompt`` and compiles the constraint, each on its own pool (a prompt is
        never tokenized behind someone's big schema)."""
        loop = asyncio.get_running_loop()
        tokens = loop.run_in_executor(self.token_pool, self.tokenize, prompt)
        if build is None or param is None:
            return await tokens, None
        matcher = loop.run_in_executor(self.compile_pool, self._compile, param, spec, build)
        return await asyncio.gather(tokens, matcher)

    def _compile(
        self, param: str, spec: Any, build: Callable[[], Grammar | None]
    ) -> Matcher | None:
        try:
            if self.compile_hook is not None:
                self.compile_hook(param, spec)
            grammar = build()
            if grammar is None:
                return None
            return Matcher(compile(grammar, self.vocab, max_state_size=self.max_state_size))
        except ApiError:
            raise
        except (GbnfSamplerError, ValueError, TypeError, RecursionError) as e:
            raise from_constraint_error(e, param) from e

    def tokenize(self, prompt: str) -> list[int]:
        tokens = [int(t) for t in self.llm.tokenize(prompt.encode("utf-8"), True, True)]
        bos = int(self.llm.token_bos())
        if len(tokens) >= 2 and tokens[0] == tokens[1] == bos:  # the template wrote one too
            tokens = tokens[1:]
        return tokens

    def check_length(self, prompt: list[int], params: SamplingParams) -> None:
        """A 400 when the prompt leaves no room; otherwise trims ``max_tokens`` to the slot."""
        room = self.context.ctx_per_slot - len(prompt)
        if room < 1:
            raise ApiError(
                400,
                f"the prompt has {len(prompt)} tokens; this server's context is "
                f"{self.context.ctx_per_slot} tokens per request (gbnf-sampler serve --ctx)",
                param="messages",
                code="context_length_exceeded",
            )
        params.max_tokens = min(params.max_tokens, room)

    def submit(self, job: Job) -> None:
        with self.cond:
            self.ready.append(job)
            self.cond.notify_all()

    def cancel(self, job: Job) -> None:
        """Frees the job's slot at the next step (its KV cells are cleared)."""
        with self.cond:
            job.cancelled = True
            self.cond.notify_all()

    # ---- the decode thread ----------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self.cond:
                while not self.stopping and not self._has_work():
                    self.cond.wait()
                if self.stopping:
                    break
                self._admit()
            try:
                self._step()
            except Exception as e:  # never let the thread die: fail what is in flight
                logger.exception("decode step failed")
                self._fail_all(e)
        for slot in self.slots:
            if slot.job is not None:
                self._finish(slot, None, error=ApiError(503, "the server is shutting down"))

    def _has_work(self) -> bool:
        while self.ready and self.ready[0].cancelled:
            self.ready.popleft()
        if any(s.job is not None for s in self.slots):
            return True
        return bool(self.ready)

    def _admit(self) -> None:
        while self.ready:
            free = [s for s in self.slots if s.job is None]
            if not free:
                return
            job = self.ready.popleft()
            if job.cancelled:
                continue
            slot = max(free, key=lambda s: _common_prefix(s.cached, job.prompt))
            self._start(slot, job)

    def _start(self, slot: Slot, job: Job) -> None:
        keep = min(_common_prefix(slot.cached, job.prompt), len(job.prompt) - 1)
        if keep < len(slot.cached) and not self.context.keep_prefix(slot.seq, keep):
            keep = 0
        slot.cached = slot.cached[:keep]
        slot.pending = job.prompt[keep:]
        slot.job, slot.last, slot.row = job, None, -1
        slot.rng = job.params.rng()
        slot.text = TextStream(list(job.params.stop))
        job.cached_tokens = keep
        job.admitted = time.perf_counter()

    def _step(self) -> None:
        for slot in self.slots:
            if slot.job is not None and slot.job.cancelled:
                self._drop(slot)
        self.context.clear_batch()
        self._add_generating()
        self._add_prompts()
        if self.context.n_tokens == 0:
            return
        outputs = [s for s in self.slots if s.job is not None and s.row >= 0]
        constrained = [s for s in outputs if s.job is not None and s.job.matcher is not None]
        pending = self._fill_masks_async(constrained)
        try:
            logits = self.context.decode()
        finally:
            constrained = self._filled(pending, constrained)
        self.steps += 1
        self._apply_masks(logits, constrained)
        self._sample(logits, [s for s in outputs if s.job is not None])

    def _add_generating(self) -> None:
        for slot in self.slots:
            slot.row = -1
            if slot.job is not None and slot.last is not None:
                slot.row = self.context.add(slot.last, len(slot.cached), slot.seq, True)
                slot.cached.append(slot.last)
                slot.last = None

    def _add_prompts(self) -> None:
        for slot in self.slots:
            if slot.job is None or not slot.pending:
                continue
            chunk = slot.pending[: min(self.context.room(), len(slot.pending))]
            if not chunk:
                return
            for i, token in enumerate(chunk):
                last = i == len(chunk) - 1 and len(chunk) == len(slot.pending)
                row = self.context.add(token, len(slot.cached), slot.seq, last)
                slot.cached.append(token)
                if last:
                    slot.row = row
            slot.pending = slot.pending[len(chunk) :]

    def _fill_masks_async(self, constrained: list[Slot]) -> Future[None] | None:
        if not constrained:
            return None
        matchers = [s.job.matcher for s in constrained if s.job is not None and s.job.matcher]
        return self.mask_pool.submit(fill_masks, matchers, self.masks)

    def _filled(self, pending: Future[None] | None, constrained: list[Slot]) -> list[Slot]:
        """Waits for the batched mask fill. If a grammar raised (a resource limit such as the
        parser-state size), the masks are filled one by one and only the jobs whose grammar
        raised fail; the slots still constrained are returned, in mask-row order."""
        if pending is None:
            return constrained
        try:
            pending.result()
            return constrained
        except Exception:
            logger.info("batched mask fill failed; filling one by one", exc_info=True)
        kept: list[Slot] = []
        for slot in constrained:
            matcher = slot.job.matcher if slot.job is not None else None
            try:
                if matcher is not None:
                    matcher.fill_mask(self.masks, len(kept))
                    kept.append(slot)
            except Exception as e:
                self._finish(slot, None, error=from_constraint_error(e, "grammar"))
        return kept

    def _apply_masks(self, logits: np.ndarray, constrained: list[Slot]) -> None:
        if not constrained:
            return
        rows = np.asarray([s.row for s in constrained], dtype=np.int64)
        full = self.full_masks[: logits.shape[0]]
        full[rows] = self.masks[: len(constrained)]
        apply_bitmask(logits, full, indices=rows)

    def _sample(self, logits: np.ndarray, outputs: list[Slot]) -> None:
        tokens: dict[int, int] = {}
        for slot in outputs:
            job = slot.job
            if job is None or slot.rng is None:
                continue
            row = logits[slot.row]
            if job.params.ignore_eos and job.matcher is None and self.eos.size:
                row[self.eos] = -np.inf
            tokens[slot.seq] = sample(row, job.params, slot.rng)
        live = [s for s in outputs if s.seq in tokens and not self._ends_turn(s, tokens[s.seq])]
        self._accept([s for s in live if s.job is not None and s.job.matcher], tokens)
        for slot in live:
            if slot.job is not None:
                self._emit(slot, slot.job, tokens[slot.seq])

    def _accept(self, constrained: list[Slot], tokens: dict[int, int]) -> None:
        """Advances each grammar over its sampled token; a job whose grammar refuses its token
        or raises (a resource limit) fails, the others go on. One call per matcher, not
        :func:`gs.accept_tokens`: a batch that raises part-way leaves the others advanced, and
        telling which is not possible (and each accept takes microseconds)."""
        for slot in constrained:
            matcher = slot.job.matcher if slot.job is not None else None
            if matcher is None:
                continue
            token = tokens[slot.seq]
            try:
                accepted = matcher.accept_token(token)
            except Exception as e:
                self._finish(slot, None, error=from_constraint_error(e, "grammar"))
                continue
            if not accepted:
                message = f"the grammar refused sampled token {token} (a sampler bug)"
                self._finish(slot, None, error=ApiError(500, message, type="server_error"))

    def _ends_turn(self, slot: Slot, token: int) -> bool:
        if self.context.is_eog(token) or self.vocab.is_eos(token):
            self._finish(slot, "stop")
            return True
        return False

    def _emit(self, slot: Slot, job: Job, token: int) -> None:
        job.completion_tokens += 1
        if job.completion_tokens == 1:
            job.first_token = time.perf_counter()
        text = slot.text.push(self.vocab.token_bytes(token))
        if text:
            job.push(Event("text", text=text))
        if slot.text.stopped or self._grammar_done(job):
            self._finish(slot, "stop")
        elif self._out_of_room(slot, job):
            self._finish(slot, "length")
        else:
            slot.last = token

    def _grammar_done(self, job: Job) -> bool:
        """The grammar is complete and nothing but end-of-sequence may follow: the answer ends
        here (sampling would have to pick EOS next)."""
        matcher = job.matcher
        if matcher is None or not matcher.can_terminate():
            return False
        row = self.scratch[0]
        matcher.fill_mask(row)
        np.bitwise_and.at(row, self.eos // 32, self.eos_clear)
        return not row.any()

    def _out_of_room(self, slot: Slot, job: Job) -> bool:
        budget = job.completion_tokens >= job.params.max_tokens
        return budget or len(slot.cached) + 1 >= self.context.ctx_per_slot

    def _finish(self, slot: Slot, reason: str | None, error: ApiError | None = None) -> None:
        job = slot.job
        slot.job, slot.last, slot.pending, slot.row = None, None, [], -1
        if job is None:
            return
        job.finished = time.perf_counter()
        rest = slot.text.flush()
        if rest and error is None:
            job.push(Event("text", text=rest))
        job.push(Event("error", error=error) if error else Event("done", finish_reason=reason))

    def _drop(self, slot: Slot) -> None:
        """A cancelled job: its slot is free now and its KV cells are cleared."""
        self.context.clear(slot.seq)
        slot.cached = []
        slot.job, slot.last, slot.pending, slot.row = None, None, [], -1
        self.cancelled += 1

    def _fail_all(self, error: Exception) -> None:
        failure = ApiError(500, f"decoding failed: {error}", type="server_error")
        for slot in self.slots:
            self.context.clear(slot.seq)
            slot.cached = []
            if slot.job is not None:
                self._finish(slot, None, error=failure)

    def busy_slots(self) -> int:
        return sum(s.job is not None for s in self.slots)


__all__ = ["CompileHook", "Engine", "Event", "Job", "Slot"]
