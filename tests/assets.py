"""Reference data for tests and benchmarks, fetched from the package index on first use and cached.

llama.cpp's example grammars and vocab-only GGUF files ship inside the llama-cpp-python source
distribution. They are not copied into this repository: :func:`llama_cpp_assets` downloads the
sdist once, through the same package index pip uses (its PEP 503 "simple" page, so any mirror or
proxy pip is configured with works), checks the file's sha256 from that page, extracts
``grammars/*.gbnf`` and ``models/ggml-vocab-*.gguf``, and caches them under
``$GBNF_SAMPLER_CACHE`` (default ``~/.cache/gbnf-sampler``). Nothing is built.

Tests reach the assets through :func:`require`: a missing asset skips the test, except under
``CI=true`` where it fails with the reason (CI must never lose these tests silently).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import TypeVar
from urllib.parse import urljoin, urlsplit

import pytest

logger = logging.getLogger(__name__)

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
_PROJECT = "llama-cpp-python"
_WANTED_DIRS = ("vendor/llama.cpp/grammars/", "vendor/llama.cpp/models/")
_DEFAULT_INDEX = "https://pypi.org/simple/"
T = TypeVar("T")


class AssetUnavailable(RuntimeError):
    """The reference data could not be fetched (no network, index unreachable, ...)."""


def cache_dir() -> Path:
    root = os.environ.get("GBNF_SAMPLER_CACHE") or os.path.join("~", ".cache", "gbnf-sampler")
    return Path(root).expanduser()


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def require(getter: Callable[[], T]) -> T:
    """``getter()``; when an asset is unavailable, skip the test (fail it under ``CI=true``)."""
    try:
        return getter()
    except AssetUnavailable as e:
        if in_ci():
            pytest.fail(f"test asset unavailable (CI must not skip this test): {e}")
        pytest.skip(f"test asset unavailable: {e}")


def _pip_config(key: str) -> list[str]:
    """Values of a pip setting as pip itself resolves it (environment, config files)."""
    env = os.environ.get("PIP_" + key.upper().replace("-", "_"))
    if env:
        return env.split()
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    for line in out.splitlines():
        name, _, value = line.partition("=")
        if name.split(".")[-1] == key:
            return value.strip().strip("'\"").split()
    return []


def index_urls() -> list[str]:
    """The simple-index base URLs pip would use: index-url (default PyPI), then extra ones."""
    primary = _pip_config("index-url") or [_DEFAULT_INDEX]
    urls = [u if u.endswith("/") else u + "/" for u in primary + _pip_config("extra-index-url")]
    return [u for u in urls if urlsplit(u).scheme in ("http", "https")]


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def _sdist_url(index: str, version: str) -> tuple[str, str | None]:
    """(download URL, sha256 or None) of the sdist, from the project's simple page."""
    page = urljoin(index, _PROJECT + "/")
    request = urllib.request.Request(page, headers={"Accept": "text/html"})
    with urllib.request.urlopen(request, timeout=60) as response:
        links = _Links()
        links.feed(response.read().decode("utf-8", "replace"))
    names = {f"{stem}-{version}.tar.gz" for stem in ("llama_cpp_python", _PROJECT)}
    for href in links.hrefs:
        url, _, fragment = urljoin(page, href).partition("#")
        if url.rsplit("/", 1)[-1] in names:
            digest = fragment[len("sha256=") :] if fragment.startswith("sha256=") else None
            return url, digest
    raise AssetUnavailable(f"{page} lists no sdist of {_PROJECT} {version}")


def _download(url: str, digest: str | None, dest: Path) -> Path:
    target = dest / url.rsplit("/", 1)[-1]
    sha = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=600) as src, open(target, "wb") as out:
        while chunk := src.read(1 << 20):
            sha.update(chunk)
            out.write(chunk)
    if digest is not None and sha.hexdigest() != digest:
        raise AssetUnavailable(f"{url}: sha256 {sha.hexdigest()} differs from the index's {digest}")
    return target


def _fetch_sdist(version: str, dest: Path) -> Path:
    errors = []
    for index in index_urls():
        try:
            url, digest = _sdist_url(index, version)
            return _download(url, digest, dest)
        except (OSError, ValueError, AssetUnavailable) as e:
            logger.info("fetching the sdist from %s failed: %s", index, e)
            errors.append(f"{index}: {e}")
    raise AssetUnavailable("; ".join(errors) or "no http(s) package index configured")


def _extract(sdist: Path, target: Path) -> None:
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            inner = member.name.split("/", 1)[-1]
            if not member.isfile() or not inner.startswith(_WANTED_DIRS):
                continue
            if inner.startswith(_WANTED_DIRS[1]) and not inner.endswith(".gguf"):
                continue
            source = tar.extractfile(member)
            if source is None:
                continue
            out_path = target / inner.split("/", 2)[-1]  # grammars/x.gbnf, models/y.gguf
            out_path.parent.mkdir(parents=True, exist_ok=True)
            with source, open(out_path, "wb") as out:
                shutil.copyfileobj(source, out)


def llama_cpp_assets(version: str = LLAMA_CPP_PYTHON_VERSION) -> Path:
    """Directory holding ``grammars/`` and ``models/`` from llama-cpp-python's sdist.

    Raises :class:`AssetUnavailable` when the sdist cannot be fetched.
    """
    target = cache_dir() / f"llama-cpp-python-{version}"
    marker = target / ".complete"
    if marker.exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        _extract(_fetch_sdist(version, Path(tmp)), target)
    marker.touch()
    return target


def llama_cpp_grammars(version: str = LLAMA_CPP_PYTHON_VERSION) -> dict[str, Path]:
    """llama.cpp's example grammars by stem (``json``, ``c``, ``chess``, ...)."""
    folder = llama_cpp_assets(version) / "grammars"
    return {p.stem: p for p in sorted(folder.glob("*.gbnf"))}


def vocab_gguf(name: str, version: str = LLAMA_CPP_PYTHON_VERSION) -> Path:
    """Path of llama.cpp's ``ggml-vocab-<name>.gguf`` (``llama-bpe``, ``qwen2``, ...)."""
    path = llama_cpp_assets(version) / "models" / f"ggml-vocab-{name}.gguf"
    if not path.is_file():
        raise AssetUnavailable(f"{path.name} is not in llama-cpp-python {version}'s sdist")
    return path


__all__ = [
    "LLAMA_CPP_PYTHON_VERSION",
    "AssetUnavailable",
    "cache_dir",
    "in_ci",
    "index_urls",
    "llama_cpp_assets",
    "llama_cpp_grammars",
    "require",
    "vocab_gguf",
]
