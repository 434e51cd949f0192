"""What a decoding step with a jump-forward draft costs, learned from the machine's own times.

A step evaluates the sampled token and the draft's tokens in one batch, with a row of logits
for each draft token the model must check and for the last row. On llama.cpp's CPU kernels with
a 262k-token vocabulary the output layer dominates, and what one more row costs depends on the
machine, the thread count and the kernels chosen for the batch: from about a third of a
one-token step to more than two (``bench/draft_cost.py``). No fixed table is right everywhere,
and a wrong one makes jump-forward slower than plain decoding. So the cost model starts from a
prior and follows the steps the decoding loop times.
"""

from __future__ import annotations

import statistics
import weakref
from collections import deque
from typing import Any


class StepCosts:
    """Cost of a step by its shape, in plain steps (one token, one row of logits):
    ``1 + token * (tokens - 1) + row * (rows - 1)``. ``token`` and ``row`` are the medians of
    what the last measured steps imply (a step slowed down by something else, once, moves no
    median). Before any measurement, the costs ``bench/draft_cost.py`` measured on llama.cpp's
    CPU kernels with the embedded model's 262k-token vocabulary: ``PRIOR_TOKEN`` per token, and
    ``PRIOR_ROWS[r - 1]`` for ``r`` rows beyond one (some kernels are cheaper for more rows)."""

    PRIOR_TOKEN = 0.25  # an unchecked draft token: its share of the batch
    PRIOR_ROWS = (0.0, 0.9, 2.1, 1.2, 2.2, 1.6, 2.7)
    PRIOR_ROW = 0.45  # per row, for more rows than PRIOR_ROWS covers
    RECENT = 7  # measurements each median is taken over
    # Plain steps after which a checked draft is evaluated again although the costs say it
    # does not pay: the machine's load, and so the costs, may have changed.
    RETRY_AFTER = 256

    def __init__(self) -> None:
        self._plain: deque[float] = deque(maxlen=self.RECENT)  # seconds
        self._token: deque[float] = deque(maxlen=self.RECENT)  # implied costs
        self._row: deque[float] = deque(maxlen=self.RECENT)
        self.steps_without_rows = 0  # measured steps since the last one with a checked token

    @property
    def token(self) -> float:
        return statistics.median(self._token) if self._token else self.PRIOR_TOKEN

    @property
    def row(self) -> float:
        return statistics.median(self._row) if self._row else self.PRIOR_ROW

    def _rows_measured(self) -> bool:
        return bool(self._row)

    def cost(self, tokens: int, rows: int) -> float:
        if not self._rows_measured() and rows <= len(self.PRIOR_ROWS):
            extra = self.PRIOR_ROWS[rows - 1]
        else:
            extra = self.row * (rows - 1)
        return 1.0 + self.token * (tokens - 1) + extra

    def checked_may_pay(self) -> bool:
        """Whether a checked draft token can pay at all (kept for sure, it adds one token for
        its share of the batch and its row), or is due to be measured again."""
        return self.token + self.row < 1.0 or self.steps_without_rows >= self.RETRY_AFTER

    def measure(self, tokens: int, rows: int, seconds: float) -> None:
        """Learns from a step of ``tokens`` evaluated with ``rows`` rows of logits that took
        ``seconds``. Plain steps set the unit; steps with unchecked draft tokens only, the
        token cost; steps with checked ones, the row cost (given the token cost)."""
        if seconds <= 0.0 or tokens < 1 or not 1 <= rows <= tokens:
            return
        self.steps_without_rows = 0 if rows > 1 else self.steps_without_rows + 1
        if tokens == 1:
            self._plain.append(seconds)
            return
        if not self._plain:
            return  # no unit yet
        ratio = seconds / statistics.median(self._plain)
        if rows == 1:
            self._token.append(max(0.0, (ratio - 1.0) / (tokens - 1)))
        else:
            implied = (ratio - 1.0 - self.token * (tokens - 1)) / (rows - 1)
            self._row.append(max(0.0, implied))


class BatchStepCosts(StepCosts):
    """Step costs for a batch of sequences (the server's engine): the seconds of a step are
    fitted as ``fixed + per_token * tokens + per_row * rows`` by least squares over the last
    ``WINDOW`` steps. A sequence's plain step is its share of a batch of ``sequences`` plain
    steps, ``fixed / sequences + per_token + per_row``; ``token`` and ``row`` are ``per_token``
    and ``per_row`` in that unit. Until the steps seen determine the fit (token and row counts
    that varied apart), the priors."""

    WINDOW = 64
    REFIT_EVERY = 8

    def __init__(self) -> None:
        super().__init__()
        self.sequences = 1  # sequences generating in the next step (set by the engine)
        self._steps: deque[tuple[float, float, float]] = deque(maxlen=self.WINDOW)
        self._fit: tuple[float, float, float] | None = None  # fixed, per token, per row
        self._measured = 0

    @property
    def token(self) -> float:
        return self._in_plain_steps(1, self.PRIOR_TOKEN)

    @property
    def row(self) -> float:
        return self._in_plain_steps(2, self.PRIOR_ROW)

    def _in_plain_steps(self, part: int, prior: float) -> float:
        """Part ``part`` of the fit (1: per token, 2: per row) in a sequence's plain steps."""
        if self._fit is None:
            return prior
        fixed, per_token, per_row = self._fit
        return self._fit[part] / (fixed / max(self.sequences, 1) + per_token + per_row)

    def _rows_measured(self) -> bool:
        return self._fit is not None

    def measure_batch(self, tokens: int, rows: int, draft_rows: int, seconds: float) -> None:
        """Learns from a step that decoded ``tokens`` with ``rows`` rows of logits, of which
        ``draft_rows`` checked draft tokens, in ``seconds``."""
        if seconds <= 0.0 or tokens < 1:
            return
        self.steps_without_rows = 0 if draft_rows else self.steps_without_rows + 1
        self._steps.append((float(tokens), float(rows), seconds))
        self._measured += 1
        if self._measured % self.REFIT_EVERY == 0:
            self._fit = _least_squares(list(self._steps)) or self._fit


def _least_squares(steps: list[tuple[float, float, float]]) -> tuple[float, float, float] | None:
    """(fixed, per token, per row) fitting the steps' seconds, or None when the steps do not
    determine them (too few, or token and row counts that never varied apart)."""
    import numpy as np

    if len(steps) < 8:
        return None
    data = np.asarray(steps)
    design = np.column_stack([np.ones(len(data)), data[:, 0], data[:, 1]])
    if np.linalg.matrix_rank(design) < 3 or np.linalg.cond(design) > 1e6:
        return None
    fixed, per_token, per_row = np.linalg.lstsq(design, data[:, 2], rcond=None)[0]
    if per_token < 0 or per_row < 0 or fixed < 0:
        return None  # noise the model cannot explain: keep what was fitted before
    return float(fixed), float(per_token), float(per_row)


_by_model: weakref.WeakKeyDictionary[Any, StepCosts] = weakref.WeakKeyDictionary()


def step_costs_for(llm: Any) -> StepCosts:
    """The step costs learned for a ``llama_cpp.Llama``, shared by its generations (the costs
    belong to the model, its threads and the machine, not to one request)."""
    costs = _by_model.get(llm)
    if costs is None:
        costs = _by_model[llm] = StepCosts()
    return costs


__all__ = ["BatchStepCosts", "StepCosts", "step_costs_for"]
