from __future__ import annotations

from pathlib import Path

import pytest

from assets import llama_cpp_grammars, require


@pytest.fixture(scope="session")
def llama_grammars() -> dict[str, Path]:
    """llama.cpp's example grammars, from the cached llama-cpp-python sdist."""
    return require(llama_cpp_grammars)
