"""Reference data for tests and benchmarks, fetched from PyPI on first use and cached.

llama.cpp's example grammars and vocab-only GGUF files ship inside the llama-cpp-python source
distribution. They are not copied into this repository: :func:`llama_cpp_assets` downloads the
sdist once, extracts ``grammars/*.gbnf`` and ``models/ggml-vocab-*.gguf``, and caches them under
``$GBNF_SAMPLER_CACHE`` (default ``~/.cache/gbnf-sampler``).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

logger = logging.getLogger(__name__)

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
_SDIST_PROJECT = "llama-cpp-python"
_WANTED_DIRS = ("vendor/llama.cpp/grammars/", "vendor/llama.cpp/models/")


class AssetUnavailable(RuntimeError):
    """The reference data could not be fetched (no network, PyPI unreachable, ...)."""


def cache_dir() -> Path:
    root = os.environ.get("GBNF_SAMPLER_CACHE") or os.path.join("~", ".cache", "gbnf-sampler")
    return Path(root).expanduser()


def _download_with_pip(version: str, dest: Path) -> Path:
    # --no-build-isolation: pip still prepares the sdist's metadata, and with isolation that
    # means building cmake from source (tens of minutes). The installed backend is enough.
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        "--no-build-isolation",
        "--quiet",
        f"{_SDIST_PROJECT}=={version}",
        "-d",
        str(dest),
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=900)
    found = sorted(dest.glob("*.tar.gz"))
    if not found:
        raise AssetUnavailable("pip download produced no sdist")
    return found[0]


def _download_from_json_api(version: str, dest: Path) -> Path:
    url = f"https://pypi.org/pypi/{_SDIST_PROJECT}/{version}/json"
    with urllib.request.urlopen(url, timeout=60) as response:
        release = json.load(response)
    for file in release["urls"]:
        if file["packagetype"] == "sdist":
            target = dest / str(file["filename"])
            with urllib.request.urlopen(file["url"], timeout=600) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
            return target
    raise AssetUnavailable(f"no sdist listed for {_SDIST_PROJECT} {version}")


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
        errors = []
        sdist = None
        for fetch in (_download_with_pip, _download_from_json_api):
            try:
                sdist = fetch(version, Path(tmp))
                break
            except (OSError, subprocess.SubprocessError, ValueError, AssetUnavailable) as e:
                logger.info("fetching the sdist with %s failed: %s", fetch.__name__, e)
                errors.append(f"{fetch.__name__}: {e}")
        if sdist is None:
            raise AssetUnavailable("; ".join(errors))
        _extract(sdist, target)
    marker.touch()
    return target


def llama_cpp_grammars(version: str = LLAMA_CPP_PYTHON_VERSION) -> dict[str, Path]:
    """llama.cpp's example grammars by stem (``json``, ``c``, ``chess``, ...)."""
    folder = llama_cpp_assets(version) / "grammars"
    return {p.stem: p for p in sorted(folder.glob("*.gbnf"))}


__all__ = [
    "LLAMA_CPP_PYTHON_VERSION",
    "AssetUnavailable",
    "cache_dir",
    "llama_cpp_assets",
    "llama_cpp_grammars",
]
