# Type stubs of the C++ extension module. Keep in step with csrc/bindings/.
from typing import Any

# --- grammar ---

class GrammarLimits:
    max_text_bytes: int
    max_rules: int
    max_nesting_depth: int
    max_repetition_bound: int
    max_nodes: int
    def __init__(self) -> None: ...

class Grammar:
    @property
    def root_name(self) -> str: ...
    @property
    def rule_count(self) -> int: ...
    @property
    def node_count(self) -> int: ...
    def rules_ast(self) -> list[tuple[str, tuple[Any, ...]]]: ...
    def warnings(self) -> list[dict[str, Any]]: ...
    def to_gbnf(self) -> str: ...
    def same_as(self, other: Grammar) -> bool: ...

def parse_grammar(text: bytes, root: str = "root", limits: GrammarLimits = ...) -> Grammar: ...

# --- kernels ---

def bitmask_words(vocab_size: int) -> int: ...
def apply_bitmask(
    logits: Any, bitmask: Any, *, indices: Any = None, vocab_size: int | None = None
) -> None: ...
def _unsafe_apply_bitmask(
    logits_ptr: int,
    dtype: str,
    rows: int,
    cols: int,
    row_stride: int,
    col_stride: int,
    bitmask_ptr: int,
    words: int,
    bitmask_row_stride: int,
    vocab_size: int,
    indices_ptr: int = 0,
    num_indices: int = 0,
) -> None: ...
