"""Exceptions: one base class, so the command line can print any of them as one line."""

from __future__ import annotations

__all__ = ["BuildError", "ConfigError", "MESSAGE_CHARS", "MissingInputError", "ParseError",
           "ProvenanceMismatch", "ReportError"]

# A message quotes what it found, and a file can hold a value of 200,000 characters: the
# message keeps its start and its end (what was expected) around an ellipsis, so the line
# stays a line a terminal shows.
MESSAGE_CHARS = 500
_MESSAGE_END = 120


def _one_line_message(message: str) -> str:
    """``message`` on one line (a line break in a quoted value shown as ``\\n``), cut in
    its middle when longer than MESSAGE_CHARS."""
    message = message.replace("\r", "\\r").replace("\n", "\\n")
    if len(message) <= MESSAGE_CHARS:
        return message
    return f"{message[:MESSAGE_CHARS - _MESSAGE_END - 3]} … {message[-_MESSAGE_END:]}"


class ReportError(Exception):
    """Raised for any problem a user can act on; the CLI prints it as one line."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 hint: str | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.hint = hint
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = ""
        if self.path:
            where = f"{self.path}:{self.line}: " if self.line else f"{self.path}: "
        text = f"{where}{_one_line_message(self.message)}"
        if self.hint:
            text += f"; {self.hint}"
        return text


class ParseError(ReportError):
    """Raised when an input file is not in a format we can read."""


class MissingInputError(ReportError):
    """Raised when a run folder or a file it needs does not exist."""


class ConfigError(ReportError):
    """Raised when run.yaml or a scenario file has a missing, unknown or mistyped key."""


class ProvenanceMismatch(ReportError):
    """Raised when a raw file no longer matches its recorded checksum."""


class BuildError(ReportError):
    """Raised when a pipeline step (a notebook, the renderer) fails."""
