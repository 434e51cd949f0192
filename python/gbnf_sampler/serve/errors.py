"""Errors the server answers with: an HTTP status and the fields of OpenAI's error object.

Every failure a request can cause becomes an :class:`ApiError`; the two dialects render it in
their own shape (:meth:`ApiError.openai_body`, :meth:`ApiError.ollama_body`). Grammar and schema
errors keep our diagnostic (code, line, column, snippet; JSON pointer for schemas).
"""

from __future__ import annotations

from typing import Any

from ..errors import GrammarError, GrammarTooComplexError, SchemaError


class ApiError(Exception):
    """A request failed: ``status`` is the HTTP status, the rest is OpenAI's error object."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
        self.details = details or {}

    def openai_body(self) -> dict[str, Any]:
        error: dict[str, Any] = {
            "message": self.message,
            "type": self.type,
            "param": self.param,
            "code": self.code,
        }
        error.update(self.details)
        return {"error": error}

    def ollama_body(self) -> dict[str, Any]:
        return {"error": self.message}


def bad_request(message: str, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, param=param, code=code)


def from_constraint_error(error: Exception, param: str) -> ApiError:
    """The 400 for a grammar or schema that does not compile, carrying our diagnostic."""
    if isinstance(error, GrammarError):
        if error.code == "text_too_large":
            return ApiError(413, f"{param}: {error}", param=param, code="grammar_too_large")
        diagnostic = {
            "code": error.code,
            "line": error.line,
            "column": error.column,
            "snippet": error.snippet,
            "hint": error.hint,
        }
        return ApiError(
            400,
            f"{param}: invalid grammar: {error}",
            param=param,
            code="invalid_grammar",
            details={"diagnostic": diagnostic},
        )
    if isinstance(error, SchemaError):
        return ApiError(
            400,
            f"{param}: invalid schema at {error.path or '/'}: {error.message}",
            param=param,
            code="invalid_schema",
            details={"diagnostic": {"code": "schema", "path": error.path}},
        )
    if isinstance(error, GrammarTooComplexError):
        return ApiError(400, f"{param}: {error}", param=param, code="grammar_too_complex")
    return ApiError(400, f"{param}: {error}", param=param, code="invalid_constraint")


__all__ = ["ApiError", "bad_request", "from_constraint_error"]
