"""Small file helpers every stage shares: checksums, UTF-8 text with the failing line named,
and atomic writes (a temporary file, then a rename), so no reader sees half a file."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import MissingInputError, ParseError
from .figures import dumps


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_text(path: Path, rel: str | None = None) -> str:
    """Read a text file as UTF-8; a byte that is not UTF-8 is an error naming the line."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ParseError(f"byte 0x{data[exc.start]:02x} is not UTF-8 text",
                         path=rel or str(path), line=line) from None


_UMASK = os.umask(0)
os.umask(_UMASK)


def write_text_atomic(path: Path, text: str | bytes) -> None:
    """Write via a temporary file in the same folder and rename, so no reader sees half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8") if isinstance(text, str) else text
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_UMASK)   # mkstemp makes 0600; give the usual mode
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    write_text_atomic(path, dumps(obj))


def read_json(path: Path) -> Any:
    import json

    if not path.is_file():
        raise MissingInputError(f"{path} not found")
    return json.loads(path.read_text(encoding="utf-8"))


def looks_binary(head: bytes) -> bool:
    """True for bytes that are not text: a NUL, or a start that is not UTF-8 at all."""
    if b"\x00" in head:
        return True
    sample = head[:4096]
    text = sample.decode("utf-8", errors="replace")
    bad = text.count("\ufffd") - (1 if len(sample) == 4096 else 0)   # a cut last character
    return bad > max(8, len(sample) // 50)
