"""Fuzz targets of the Python API. Each module has ``run_one(data: bytes) -> None``: it raises
(anything but the documented exceptions, or AssertionError for a broken invariant) only on a
bug. atheris drives them (fuzz/run_atheris.sh); tests/test_fuzz_regressions.py replays the kept
inputs without atheris."""
