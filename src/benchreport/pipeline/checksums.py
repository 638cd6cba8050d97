"""data/<RUN>/SHA256SUMS: the run's inputs as recorded; verified before every build."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import ParseError, ProvenanceMismatch
from ..core.files import sha256_file, write_text_atomic

__all__ = ["NAME", "read", "record", "verify"]

NAME = "SHA256SUMS"


def _inputs(data: Path) -> list[Path]:
    return sorted(p for p in data.rglob("*") if p.is_file() and p.name != NAME
                  and not any(part.startswith(".") for part in p.relative_to(data).parts))


def record(data: Path) -> Path:
    """Write SHA256SUMS (the `sha256sum` format) for every file under ``data``."""
    lines = [f"{sha256_file(p)}  {p.relative_to(data).as_posix()}\n" for p in _inputs(data)]
    path = data / NAME
    write_text_atomic(path, "".join(lines))
    return path


def read(path: Path, shown: str) -> dict[str, str]:
    out = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise ParseError("expected '<sha256>  <path>' as sha256sum writes it",
                             path=shown, line=number)
        out[name] = digest
    return out


def verify(data: Path, shown: str, run_id: str) -> int:
    """Check every input against SHA256SUMS; return how many were checked.

    A run without SHA256SUMS is not checked (returns 0). ``shown`` is how the data folder is
    named in messages (repo-relative).
    """
    path = data / NAME
    if not path.is_file():
        return 0
    recorded = read(path, f"{shown}/{NAME}")
    present = {p.relative_to(data).as_posix(): p for p in _inputs(data)}
    def hint(name: str) -> str:
        rerecord = f"re-record with: make checksums RUN={run_id}"
        if name.startswith("raw/"):
            return f"raw files are never edited: restore it; if the delivered files really " \
                   f"changed, {rerecord}"
        return f"if you changed it on purpose, {rerecord}"

    for name, digest in recorded.items():
        if name not in present:
            raise ProvenanceMismatch(f"listed in {NAME} but missing", path=f"{shown}/{name}",
                                     hint=hint(name))
        now = sha256_file(present[name])
        if now != digest:
            raise ProvenanceMismatch(
                f"sha256 is {now[:12]}…, but {NAME} records {digest[:12]}…",
                path=f"{shown}/{name}", hint=hint(name))
    extra = sorted(set(present) - set(recorded))
    if extra:
        raise ProvenanceMismatch(f"not listed in {NAME}", path=f"{shown}/{extra[0]}",
                                 hint=hint(extra[0]))
    return len(recorded)
