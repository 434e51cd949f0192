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
5. jump-forward: where a grammar forces text, its tokens are drafted after the sequence's
   sampled token in the same batch and kept only as far as the sampler picks them itself
   (:mod:`.drafts`: the output is that of plain decoding),
6. streams each new token's text to its request's asyncio queue; a request whose reasoning
   budget is spent gets the think section's closing text forced (its tokens checked against
   the grammar, then evaluated with the next batch as prompt tokens are).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from ..compiled import compile
from ..errors import GbnfSamplerError
from ..grammar import Grammar
from ..kernels import allocate_bitmask, apply_bitmask
from ..limits import DEFAULT_MAX_DRAFT_TOKENS, DEFAULT_MAX_STATE_SIZE
from ..llama.lookup import ContextLookup
from ..llama.speculative import Draft, DraftLength, plan_draft
from ..llama.step_costs import BatchStepCosts
from ..matcher import Matcher, fill_masks
from ..structural.budget import BudgetTracker
from ..vocab import Vocab
from .context import BatchContext, common_prefix
from .drafts import SlotDraft, fill_draft_masks, fill_one, may_draft
from .errors import ApiError, from_constraint_error
from .jobs import Event, Job, Slot
from .logprobs import TokenLogprob, entry, row_stats
from .sampling import SamplingParams, sample
from .text import TextStream

logger = logging.getLogger(__name__)

CompileHook = Callable[[str, Any], None]


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
        max_draft: int = DEFAULT_MAX_DRAFT_TOKENS,
        adaptive_draft: bool = True,
    ) -> None:
        if parallel < 1 or queue < 0 or ctx < 16 or max_draft < 0:
            raise ValueError(
                "need parallel >= 1, queue >= 0, ctx >= 16, max_draft >= 0; got "
                f"{parallel}, {queue}, {ctx}, {max_draft}"
            )
        self.llm = llm
        self.vocab = vocab
        self.max_draft = max_draft  # jump-forward draft tokens per sequence and step (0: off)
        # Evaluate only the part of a draft that pays by DraftLength, with the costs learned
        # from this engine's timed steps (on a CPU a row of logits over a 262k vocabulary costs
        # a decode or more); False: every draft token, for accelerators where rows are cheap.
        self.adaptive_draft = adaptive_draft
        self.costs = BatchStepCosts()  # what draft tokens and rows cost, from timed steps
        self.draft_lookup = True  # drafts go on with text guessed from the context (lookup.py)
        self.context = BatchContext(llm, parallel, ctx, threads, 1 + max_draft)
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
        self.masks = allocate_bitmask(parallel * (1 + max_draft), vocab.size)  # by output row
        self.scratch = allocate_bitmask(1, vocab.size)
        self.eos = np.asarray(sorted(set(vocab.eos_ids)), dtype=np.int64)
        self.eos_clear = (~np.left_shift(np.int64(1), self.eos % 32)).astype(np.int32)
        self.steps = 0  # decode calls so far
        self.cancelled = 0  # jobs dropped because their client went away
        self.draft_tokens = 0  # jump-forward draft tokens evaluated, all requests
        self.kept_tokens = 0  # of those, kept
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

    def tokenize_draft(self, text: bytes) -> list[int]:
        """Tokens of forced text (no BOS; special tokens' text as text, as a model writes it)."""
        return [int(t) for t in self.llm.tokenize(text, False, False)]

    def tokenize_text(self, text: str) -> list[int]:
        """Tokens of a piece of output (no BOS; special tokens as tokens)."""
        return [int(t) for t in self.llm.tokenize(text.encode("utf-8"), False, True)]

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
            slot = max(free, key=lambda s: common_prefix(s.cached, job.prompt))
            self._start(slot, job)

    def _start(self, slot: Slot, job: Job) -> None:
        keep = min(common_prefix(slot.cached, job.prompt), len(job.prompt) - 1)
        if not self.context.keep_prefix(slot.seq, keep):  # also drops unverified draft cells
            keep = 0
        slot.cached = slot.cached[:keep]
        slot.pending = job.prompt[keep:]
        slot.job, slot.last, slot.row = job, None, -1
        slot.rng = job.params.rng()
        slot.text = TextStream(list(job.params.stop))
        slot.tracker = BudgetTracker(job.budget) if job.budget is not None else None
        slot.draft = SlotDraft(length=DraftLength(costs=self.costs))
        if self.max_draft > 0 and self.draft_lookup and job.matcher is not None:
            slot.draft.lookup = ContextLookup(b"".join(map(self.vocab.token_bytes, job.prompt)))
        slot.stats, slot.entry, slot.unsent = None, None, []
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
        started, shape = time.perf_counter(), (self.context.n_tokens, self.context.n_outputs)
        try:
            logits = self.context.decode()
        finally:
            constrained = self._filled(pending, constrained)
        self.steps += 1
        self._row_stats(logits, outputs)
        self._apply_masks(logits, constrained)
        self._sample(logits, [s for s in outputs if s.job is not None])
        draft_rows = shape[1] - len(outputs)  # rows checking draft tokens
        self.costs.measure_batch(*shape, draft_rows, time.perf_counter() - started)

    def _add_generating(self) -> None:
        """Adds each generating sequence's sampled token, and its draft after it."""
        self.costs.sequences = sum(s.job is not None and s.last is not None for s in self.slots)
        for slot in self.slots:
            slot.row = -1
            slot.draft.clear()
            if slot.job is None or slot.last is None:
                continue
            draft = slot.draft
            draft.draft = self._plan(slot, slot.job)
            tokens = [slot.last, *draft.draft.tokens]
            outputs = [not alone for alone in draft.draft.only] + [True]
            start = len(slot.cached)
            for i, (token, output) in enumerate(zip(tokens, outputs, strict=True)):
                draft.rows.append(self.context.add(token, start + i, slot.seq, output))
            slot.row = draft.rows[-1]
            slot.cached.append(slot.last)  # draft tokens join it when they are kept
            slot.last = None

    def _plan(self, slot: Slot, job: Job) -> Draft:
        """The part of the forced text's tokens worth evaluating after the sampled token."""
        if self.max_draft == 0 or job.params.logprobs or not may_draft(job.matcher, slot.tracker):
            return Draft()  # (logprobs: a draft token the grammar forces alone has no logits)
        assert job.matcher is not None
        room = self.context.ctx_per_slot - len(slot.cached) - 2
        limit = min(job.params.max_tokens - job.completion_tokens, room, self.max_draft)
        spell, lookup = self.vocab.token_bytes, slot.draft.lookup
        slot.draft.planned = plan_draft(job.matcher, self.tokenize_draft, spell, limit, lookup)
        if not self.adaptive_draft:
            return slot.draft.planned
        return slot.draft.length.cut(slot.draft.planned)

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
                    slot.draft.rows = [row]
            slot.pending = slot.pending[len(chunk) :]

    def _fill_masks_async(self, constrained: list[Slot]) -> Future[None] | None:
        if not constrained:
            return None
        matchers = [s.job.matcher for s in constrained if s.job is not None and s.job.matcher]
        drafts = [s.draft for s in constrained if s.job is not None and s.job.matcher]
        if not any(d.draft for d in drafts):
            return self.mask_pool.submit(
                fill_masks, matchers, self.masks, [s.row for s in constrained]
            )
        return self.mask_pool.submit(fill_draft_masks, matchers, drafts, self.masks)

    def _filled(self, pending: Future[None] | None, constrained: list[Slot]) -> list[Slot]:
        """Waits for the batched mask fill. If a grammar raised (a resource limit such as the
        parser-state size), the masks are filled one by one and only the jobs whose grammar
        raised fail; the slots still constrained are returned."""
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
                    fill_one(matcher, slot.draft, self.masks)
                    kept.append(slot)
            except Exception as e:
                self._finish(slot, None, error=from_constraint_error(e, "grammar"))
        return kept

    def _row_stats(self, logits: np.ndarray, outputs: list[Slot]) -> None:
        """The unmasked rows' log-softmax terms, for the requests that report logprobs."""
        for slot in outputs:
            params = slot.job.params if slot.job is not None else None
            wanted = params is not None and params.logprobs
            slot.stats = (
                row_stats(logits[slot.row], params.top_logprobs) if params and wanted else None
            )

    def _apply_masks(self, logits: np.ndarray, constrained: list[Slot]) -> None:
        if not constrained:
            return
        rows = [r for s in constrained for r in s.draft.rows if r >= 0]
        indices = np.asarray(rows, dtype=np.int64)
        apply_bitmask(logits, self.masks[: logits.shape[0]], indices=indices)

    def _sample(self, logits: np.ndarray, outputs: list[Slot]) -> None:
        """For each sequence with logits: checks its draft, picks its next token, advances its
        grammar and streams what it wrote."""
        for slot in outputs:
            job = slot.job
            if job is None or slot.rng is None:
                continue
            if slot.draft.draft:
                token = self._verify(slot, job, logits)
                if slot.job is not job:  # the job ended inside its draft
                    continue
                if token is None:
                    token = self._pick(slot, job, logits[slot.row])
            else:
                token = self._pick(slot, job, logits[slot.row])
                planned = slot.draft.planned
                if planned and not planned.only[0]:  # the pick checks the draft's first token
                    slot.draft.length.observe(planned, 0, token == planned.tokens[0])
            if slot.stats is not None:
                spell = self.vocab.token_bytes
                logit = float(logits[slot.row, token])
                slot.entry = entry(token, spell(token), logit, slot.stats, spell)
            if not self._ends_turn(slot, token) and self._advance(slot, job, token):
                self._emit(slot, job, token)

    def _pick(self, slot: Slot, job: Job, row: np.ndarray) -> int:
        if job.params.ignore_eos and job.matcher is None and self.eos.size:
            row[self.eos] = -np.inf
        assert slot.rng is not None
        return sample(row, job.params, slot.rng)

    def _verify(self, slot: Slot, job: Job, logits: np.ndarray) -> int | None:
        """Keeps the draft tokens the sampler picks itself, streaming each; returns the pick at
        the first draft token it refuses (the grammar rolled back to before it, the KV cells
        from there dropped), or None when it kept them all (the grammar is after the draft)."""
        state = slot.draft
        draft = state.draft
        kept, pick = 0, None
        for j, token in enumerate(draft.tokens):
            if not draft.only[j]:
                pick = self._pick(slot, job, logits[state.rows[j]])
                if pick != token:
                    break
                pick = None
            kept += 1
            self._push_token(slot, job, token)
            if self._ends(slot, job, grammar=j == len(draft) - 1):
                break
            slot.cached.append(token)
        state.length.record(draft, kept)
        job.draft_tokens += len(draft)
        job.kept_tokens += kept
        self.draft_tokens += len(draft)
        self.kept_tokens += kept
        if slot.job is job and pick is not None:
            self._reject(slot, job, len(draft) - kept)
        return pick

    def _reject(self, slot: Slot, job: Job, refused: int) -> None:
        """Undoes the refused part of a draft: grammar and KV cells."""
        assert job.matcher is not None
        job.matcher.rollback(refused)
        if not self.context.keep_prefix(slot.seq, len(slot.cached)):
            slot.cached = []
            message = "llama.cpp could not drop a refused draft's cells (try --max-draft 0)"
            self._finish(slot, None, error=ApiError(500, message, type="server_error"))

    def _advance(self, slot: Slot, job: Job, token: int) -> bool:
        """Advances the grammar over a sampled token; a job whose grammar refuses it or raises
        (a resource limit) fails, and False is returned."""
        if job.matcher is None:
            return True
        try:
            accepted = job.matcher.accept_token(token)
        except Exception as e:
            self._finish(slot, None, error=from_constraint_error(e, "grammar"))
            return False
        if not accepted:
            message = f"the grammar refused sampled token {token} (a sampler bug)"
            self._finish(slot, None, error=ApiError(500, message, type="server_error"))
        return accepted

    def _ends_turn(self, slot: Slot, token: int) -> bool:
        if self.context.is_eog(token) or self.vocab.is_eos(token):
            self._finish(slot, "stop")
            return True
        return False

    def _emit(self, slot: Slot, job: Job, token: int) -> None:
        self._push_token(slot, job, token)
        if self._ends(slot, job):
            return
        forced = self._budget_tokens(slot, job)
        if not forced:
            slot.last = token
            return
        for t in forced:
            job.forced_tokens += 1
            self._push_token(slot, job, t)
        if not self._ends(slot, job):
            slot.pending = [token, *forced]  # evaluated with the next batch, like a prompt

    def _push_token(self, slot: Slot, job: Job, token: int) -> None:
        job.completion_tokens += 1
        if job.completion_tokens == 1:
            job.first_token = time.perf_counter()
        data = self.vocab.token_bytes(token)
        if slot.draft.lookup is not None:
            slot.draft.lookup.extend(data)
        if slot.tracker is not None:
            slot.tracker.on_token(data)
        if job.params.logprobs:
            logprob = slot.entry or TokenLogprob(data, None)  # forced: no logits of its own
            slot.entry = None
            job.logprobs.append(logprob)
            slot.unsent.append(logprob)
        text = slot.text.push(data)
        if text:
            job.push(Event("text", text=text, logprobs=self._unsent(slot)))

    @staticmethod
    def _unsent(slot: Slot) -> list[TokenLogprob]:
        unsent, slot.unsent = slot.unsent, []
        return unsent

    def _ends(self, slot: Slot, job: Job, grammar: bool = True) -> bool:
        """Finishes the job when a stop string, the grammar or the room says so (``grammar``
        False: inside a draft, where the grammar is ahead of the output and cannot end)."""
        if slot.text.stopped or (grammar and self._grammar_done(job)):
            self._finish(slot, "stop")
        elif self._out_of_room(slot, job):
            self._finish(slot, "length")
        else:
            return False
        return True

    def _budget_tokens(self, slot: Slot, job: Job) -> list[int]:
        """The think section's closing tokens when its budget is spent and the grammar takes
        them all here (else none: one more token is sampled and this is tried again)."""
        tracker, tokens = slot.tracker, job.budget_tokens
        if tracker is None or not tracker.due or not tokens:
            return []
        room = job.params.max_tokens - job.completion_tokens
        if len(tokens) > room or len(slot.cached) + len(tokens) + 2 >= self.context.ctx_per_slot:
            return []
        if job.matcher is not None:
            probe = job.matcher.fork()
            if not all(probe.accept_token(t) for t in tokens):
                return []
            for t in tokens:
                job.matcher.accept_token(t)
        tracker.forced()
        return tokens

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
        unsent = self._unsent(slot)
        slot.entry = None
        if rest and error is None:
            job.push(Event("text", text=rest, logprobs=unsent))
            unsent = []
        if error is not None:
            job.push(Event("error", error=error))
        else:
            job.push(Event("done", finish_reason=reason, logprobs=unsent))

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


__all__ = ["CompileHook", "Engine"]
