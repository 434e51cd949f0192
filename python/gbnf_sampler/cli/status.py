"""Exit statuses shared by every command (documented in the README's CLI section)."""

from __future__ import annotations

EXIT_OK = 0
# The input itself is wrong: a grammar or schema with errors (diagnostics on stderr).
EXIT_INVALID = 1
# The command could not run: an unreadable file, a missing model or package, bad arguments
# (argparse also exits with 2).
EXIT_USAGE = 2

__all__ = ["EXIT_INVALID", "EXIT_OK", "EXIT_USAGE"]
