from __future__ import annotations

from pathlib import Path

import pytest

from gbnf_sampler.testing import AssetUnavailable, llama_cpp_grammars


@pytest.fixture(scope="session")
def llama_grammars() -> dict[str, Path]:
    """llama.cpp's example grammars, from the cached llama-cpp-python sdist."""
    try:
        return llama_cpp_grammars()
    except AssetUnavailable as e:
        pytest.skip(f"llama-cpp-python sdist unavailable (needs PyPI access once): {e}")
