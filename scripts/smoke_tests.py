"""Runs the smoke subset of the test suite against the INSTALLED gbnf_sampler (a wheel).

    python scripts/smoke_tests.py [TESTS_DIR] [pytest args...]

Used by scripts/ci-wheel.sh and by cibuildwheel's test-command. It refuses to run when
``gbnf_sampler`` is not imported from the interpreter's site-packages (e.g. an editable install
or a source tree on ``sys.path``), so a pass means the wheel itself works. The subset covers
every compiled entry point (grammar parsing and errors, byte and token matchers, token masks,
batch masks, the CPU kernels, vocabularies, JSON Schema and regex front ends, the CLI) and runs
in well under a minute; the torch and transformers tests join in when those are installed.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

SMOKE_TESTS = (
    "test_grammar_syntax.py",
    "test_grammar_errors.py",
    "test_matcher.py",
    "test_token_matcher.py",
    "test_mask.py",
    "test_mask_batch.py",
    "test_kernels.py",
    "test_kernels_torch.py",
    "test_vocab.py",
    "test_hf_vocab.py",
    "test_hf.py",
    "test_json_schema_api.py",
    "test_regex.py",
    "test_cli.py",
    "test_cuda.py",
)


def installed_package_dir() -> Path:
    """Where gbnf_sampler was imported from; exits unless that is site-packages."""
    import gbnf_sampler

    package = Path(gbnf_sampler.__file__).resolve().parent
    site = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}
    if package.parent not in site:
        sys.exit(
            f"smoke_tests: gbnf_sampler was imported from {package}, not from this "
            f"interpreter's site-packages ({', '.join(sorted(map(str, site)))}); install the "
            "wheel (not an editable install) and run from outside the source tree"
        )
    return package


def main(argv: list[str]) -> int:
    tests_dir = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "tests"
    missing = [name for name in SMOKE_TESTS if not (tests_dir / name).is_file()]
    if missing:
        sys.exit(f"smoke_tests: {tests_dir} lacks {', '.join(missing)}")
    package = installed_package_dir()
    print(f"smoke_tests: gbnf_sampler from {package}", flush=True)

    import pytest

    files = [str(tests_dir / name) for name in SMOKE_TESTS]
    return int(pytest.main(["-q", "-p", "no:cacheprovider", *files, *argv[1:]]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
