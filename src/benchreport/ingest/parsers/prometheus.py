"""Server metrics: Prometheus ``/metrics`` dumps of vLLM and SGLang, read into samples.

What this module reads
----------------------
* **Text exposition** (``# HELP`` / ``# TYPE`` comments, then ``name{labels} value
  [timestamp]`` lines), parsed by ``prometheus_client.parser.text_string_to_metric_families``.
  Every sample keeps the 1-based line it came from: the parser turns each line that is
  neither blank nor a comment into exactly one sample, in file order, so the n-th sample is
  the n-th such line. Its ``name`` is the name as the line writes it (the parser adds
  ``_total`` to a counter written without it; we keep what the file says).
* **Several scrapes in one file.** Convention: a new scrape starts
  - at a separator comment ``# scrape [TIME]`` (TIME optional), ``# time[:] TIME`` or
    ``# timestamp[:] TIME`` (TIME an ISO 8601 time or a Unix epoch in s, ms, µs or ns,
    required here so that a remark such as "# time to first token" is no separator), or
    after an OpenMetrics ``# EOF``;
  - or, with no separator, where a metric family that the current scrape already holds
    appears again after another family, or where a series (name and labels) repeats. A
    family repeating is the robust signal: every exposition writes each family once.
  A scrape spans from its separator (or the line after the previous scrape's last sample)
  to its last sample.
* **AIPerf's ``server_metrics_export.jsonl``** (checked against AIPerf 0.13's writer):
  one JSON object per line and per scrape, ``{"endpoint_url", "timestamp_ns",
  "endpoint_latency_ns", "metrics": {family: [sample, ...]}, ...}``; a sample is
  ``{"labels": {...}, "value": x}``, or for a histogram ``{"labels": {...}, "buckets":
  {"0.1": n, ..., "+Inf": n}, "sum": s, "count": c}``. The family keys are the parser's
  family names, so a counter's key lacks ``_total``, and the slim lines carry no types.
  We assume: a family whose value is a dict with ``type`` and ``samples`` (AIPerf's full
  record) gives its type; otherwise the type is ``histogram`` for samples with buckets, the
  kind of the name in ``CANONICAL`` when it is listed, else ``unknown``. A counter's
  ``_total`` is put back. Histograms become ``_bucket`` (with ``le``), ``_sum`` and
  ``_count`` samples, all on the JSON line. The scrape time is ``timestamp_ns`` (UTC).

Scrape time: the latest sample timestamp in the scrape if the samples carry any, else the
separator's time, else (a file holding one scrape) an ISO-like or epoch time in the file
name, else the ``when`` the caller gives (from run.yaml), else None. Times from an epoch
or an ISO time with an offset are UTC-aware; an ISO time without offset stays naive.

Names: ``CANONICAL`` maps each engine's names across versions to one vocabulary
(``kv_cache_usage``, ``requests_running``, ``itl_seconds``, ...); other names keep
``canonical`` None. Window figures: ``counter_delta`` and ``histogram_delta`` difference
two scrapes and refuse across a counter reset; ``histogram_quantile`` estimates a quantile
from cumulative buckets.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, BinaryIO, NamedTuple

from prometheus_client.parser import text_string_to_metric_families

from ...core.errors import ParseError
from ...core.jsontext import loads
from ...core.metrics import histogram_quantile  # noqa: F401 (re-exported)

TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
ENGINE_PREFIXES = ("vllm", "sglang")

# (engine prefix, name without prefix and without a _total/_bucket/_sum/_count/_created
# suffix) -> (canonical name, kind). Within one metric, older names come first: where a
# server exposes an old and a new name side by side (a deprecation period), selecting by
# canonical name takes the later one. A counter's canonical sample name is "<name>_total";
# a histogram's samples are "<name>_bucket", "_sum", "_count". Only exact names match:
# vllm:num_requests_waiting_by_reason, vllm:prompt_tokens_by_source_total or
# vllm:request_time_per_output_token_seconds (per request) are other metrics.
CANONICAL: dict[tuple[str, str], tuple[str, str]] = {
    # vLLM V0 and V1
    ("vllm", "num_requests_running"): ("requests_running", "gauge"),
    ("vllm", "num_requests_waiting"): ("requests_waiting", "gauge"),
    ("vllm", "gpu_cache_usage_perc"): ("kv_cache_usage", "gauge"),        # V0, early V1
    ("vllm", "kv_cache_usage_perc"): ("kv_cache_usage", "gauge"),
    ("vllm", "prompt_tokens"): ("prompt_tokens", "counter"),
    ("vllm", "generation_tokens"): ("generation_tokens", "counter"),
    ("vllm", "num_preemptions"): ("preemptions", "counter"),
    ("vllm", "gpu_prefix_cache_queries"): ("prefix_cache_queries", "counter"),  # early V1
    ("vllm", "gpu_prefix_cache_hits"): ("prefix_cache_hits", "counter"),        # early V1
    ("vllm", "prefix_cache_queries"): ("prefix_cache_queries", "counter"),
    ("vllm", "prefix_cache_hits"): ("prefix_cache_hits", "counter"),
    ("vllm", "request_success"): ("request_success", "counter"),
    ("vllm", "time_to_first_token_seconds"): ("ttft_seconds", "histogram"),
    ("vllm", "time_per_output_token_seconds"): ("itl_seconds", "histogram"),    # per token
    ("vllm", "inter_token_latency_seconds"): ("itl_seconds", "histogram"),
    ("vllm", "e2e_request_latency_seconds"): ("e2e_latency_seconds", "histogram"),
    ("vllm", "spec_decode_num_drafts"): ("spec_drafts", "counter"),
    ("vllm", "spec_decode_num_draft_tokens"): ("spec_draft_tokens", "counter"),
    ("vllm", "spec_decode_num_accepted_tokens"): ("spec_accepted_tokens", "counter"),
    ("vllm", "spec_decode_num_accepted_tokens_per_pos"):           # label position=
        ("spec_accepted_tokens_per_pos", "counter"),
    # SGLang: older names first (label name=), then those of 2025 on (label model_name=)
    ("sglang", "num_requests_running"): ("requests_running", "gauge"),
    ("sglang", "queue_req"): ("requests_waiting", "gauge"),
    ("sglang", "num_running_reqs"): ("requests_running", "gauge"),
    ("sglang", "num_queue_reqs"): ("requests_waiting", "gauge"),
    ("sglang", "token_usage"): ("kv_cache_usage", "gauge"),
    ("sglang", "cache_hit_rate"): ("cache_hit_rate", "gauge"),
    ("sglang", "prompt_tokens"): ("prompt_tokens", "counter"),
    ("sglang", "generation_tokens"): ("generation_tokens", "counter"),
    ("sglang", "spec_accept_length"): ("spec_accept_length", "gauge"),   # not run-scoped
    ("sglang", "spec_accept_rate"): ("spec_accept_rate", "gauge"),       # not run-scoped
    ("sglang", "gen_throughput"): ("gen_throughput", "gauge"),
    ("sglang", "time_to_first_token_seconds"): ("ttft_seconds", "histogram"),
    ("sglang", "time_per_output_token_seconds"): ("itl_seconds", "histogram"),
    ("sglang", "inter_token_latency_seconds"): ("itl_seconds", "histogram"),
    ("sglang", "e2e_request_latency_seconds"): ("e2e_latency_seconds", "histogram"),
}
_SUFFIXES = ("_total", "_created", "_bucket", "_count", "_sum")
_SUFFIX_OF = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_count", "_sum",
                                                               "_created")}

# Detection only (is this file an exposition?); samples themselves go through the parser.
_SAMPLE_LINE = re.compile(
    r"[A-Za-z_:][A-Za-z0-9_:]*(?:\{.*\})?[ \t]+"
    r"(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?Inf|NaN)(?:[ \t]+-?\d+)?[ \t]*")
_SEPARATOR = re.compile(r"#\s*(scrape|time|timestamp)\b[:=]?\s*(.*)", re.IGNORECASE)
_NAME_ISO = re.compile(r"(?<!\d)(\d{4})-?(\d{2})-?(\d{2})[T_ -]?(\d{2})[:-]?(\d{2})"
                       r"(?:[:-]?(\d{2})(?:[.,](\d{1,6}))?)?(Z|[+-]\d{2}:?\d{2})?(?!\d)")
_NAME_EPOCH = re.compile(r"(?<![\d.])(\d{10}|\d{13}|\d{16}|\d{19})(?:\.\d+)?(?!\d)")


@dataclass(frozen=True)
class Sample:
    """One sample line: the name as exposed, its labels and value, and where it is."""

    name: str
    labels: dict[str, str]
    value: float
    line: int
    family: str
    type: str                      # counter, gauge, histogram, summary or unknown
    timestamp: float | None = None  # Unix seconds, when the line carries a timestamp

    @property
    def canonical(self) -> str | None:
        return canonical_name(self.name)

    @property
    def engine(self) -> str | None:
        """'vllm' or 'sglang' from the name's prefix."""
        prefix, colon, _ = self.name.partition(":")
        return prefix if colon and prefix in ENGINE_PREFIXES else None

    @property
    def model(self) -> str | None:
        """The model label: ``model_name=``, or SGLang's older ``name=`` on a serving metric
        (``sglang:func_latency_seconds{name="generate_request"}`` names a function)."""
        if "model_name" in self.labels:
            return self.labels["model_name"]
        if self.engine == "sglang" and self.canonical is not None:
            return self.labels.get("name")
        return None


@dataclass
class Scrape:
    """The samples of one scrape, in file order, and when it was taken."""

    index: int
    time: dt.datetime | None
    first_line: int
    last_line: int
    samples: list[Sample] = field(default_factory=list)
    time_from: str | None = None   # sample, separator, file name, given, aiperf
    path: str = ""

    def where(self, line: int | None = None) -> str:
        """``file:line`` (or the scrape's lines) for messages."""
        lines = str(line) if line is not None else f"{self.first_line}-{self.last_line}"
        return f"{self.path}:{lines}" if self.path else f"scrape {self.index}, line {lines}"

    def select(self, name: str, labels: Mapping[str, str] | None = None) -> list[Sample]:
        """Samples named ``name`` (as exposed, or canonical) whose labels include
        ``labels``. By canonical name, where the scrape exposes an old and a new name of
        the metric, only the newer name's samples."""
        want = dict(labels or {})
        out = [s for s in self.samples if (s.name == name or s.canonical == name)
               and all(s.labels.get(k) == v for k, v in want.items())]
        names = {s.name for s in out}
        if len(names) > 1 and name not in names:
            newest = max(names, key=lambda n: _RANK[_entry(n)[0]])
            out = [s for s in out if s.name == newest]
        return out

    @cached_property
    def _index(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], Sample]:
        return {(s.name, _key(s.labels)): s for s in self.samples}

    def get(self, name: str, labels: Mapping[str, str]) -> Sample | None:
        """The sample of exactly this exposed name and label set."""
        return self._index.get((name, _key(labels)))


class Delta(NamedTuple):
    """A difference between two scrapes, or None and the reason it was refused."""

    value: Any
    reason: str | None = None


def _key(labels: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(labels.items()))


_RANK = {key: rank for rank, key in enumerate(CANONICAL)}


@lru_cache(maxsize=8192)
def _entry(name: str) -> tuple[tuple[str, str], str] | None:
    """The ``CANONICAL`` key of an exposed sample name and the suffix it carries."""
    prefix, colon, rest = name.partition(":")
    if not colon or prefix not in ENGINE_PREFIXES:
        return None
    if (prefix, rest) in CANONICAL:      # a gauge, or a family name without its suffix
        return (prefix, rest), ""
    for suffix in _SUFFIXES:
        key = (prefix, rest[: -len(suffix)])
        if rest.endswith(suffix) and key in CANONICAL and \
                suffix in _SUFFIX_OF.get(CANONICAL[key][1], ()):
            return key, suffix
    return None


def canonical_name(name: str) -> str | None:
    """The canonical name of an exposed sample name (``vllm:gpu_cache_usage_perc`` ->
    ``kv_cache_usage``, ``sglang:prompt_tokens_total`` -> ``prompt_tokens_total``,
    ``vllm:inter_token_latency_seconds_bucket`` -> ``itl_seconds_bucket``), else None."""
    entry = _entry(name)
    if entry is None:
        return None
    (canon, kind), suffix = CANONICAL[entry[0]], entry[1]
    return canon + (suffix or ("_total" if kind == "counter" else ""))


def kind_of(name: str) -> str | None:
    """The kind (counter, gauge, histogram) that ``CANONICAL`` gives a family name."""
    prefix, colon, rest = name.partition(":")
    if not colon:
        return None
    for base in (rest, rest[:-6] if rest.endswith("_total") else None):
        if base is not None and (prefix, base) in CANONICAL:
            return CANONICAL[(prefix, base)][1]
    return None


# ---------------------------------------------------------------------------------------
# Times


def _utc_from_epoch(number: float) -> dt.datetime | None:
    """An epoch in s, ms, µs or ns (told apart by size) as a UTC time; None if absurd."""
    for scale in (1, 1e3, 1e6, 1e9):
        seconds = number / scale
        if 9.4e8 <= seconds < 4.2e9:         # 1999 .. 2103
            return dt.datetime.fromtimestamp(seconds, dt.UTC)
    return None


def parse_time(text: str) -> dt.datetime | None:
    """An ISO 8601 time or a Unix epoch (s, ms, µs, ns), else None."""
    text = text.strip()
    if not text:
        return None
    try:
        return _utc_from_epoch(float(text))
    except ValueError:
        pass
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return when.astimezone(dt.UTC) if when.tzinfo else when


def _first_time(words: str) -> dt.datetime | None:
    for word in words.split():
        when = parse_time(word)
        if when is not None:
            return when
    return None


def time_from_name(path: str) -> dt.datetime | None:
    """An ISO-like time (``2025-03-01T12-30-00``, ``20250301_123000``, with an optional
    offset) or a 10/13/16/19-digit Unix epoch in the file's name, else None."""
    name = os.path.basename(path)
    for m in _NAME_ISO.finditer(name):
        year, month, day, hour, minute, second, frac, zone = m.groups()
        if not 1990 <= int(year) <= 2100:
            continue
        try:
            when = dt.datetime(int(year), int(month), int(day), int(hour), int(minute),
                               int(second or 0), int((frac or "0").ljust(6, "0")))
        except ValueError:
            continue
        if zone:
            if zone == "Z":
                offset = dt.timedelta(0)
            else:
                digits = zone[1:].replace(":", "")
                offset = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
                offset = -offset if zone[0] == "-" else offset
            when = when.replace(tzinfo=dt.timezone(offset)).astimezone(dt.UTC)
        return when
    for m in _NAME_EPOCH.finditer(name):
        when = _utc_from_epoch(float(m.group(0)))
        if when is not None:
            return when
    return None


def iso(when: dt.datetime | None) -> str | None:
    return when.isoformat() if when is not None else None


# ---------------------------------------------------------------------------------------
# Recognising a metrics file


def _first_line(data: bytes) -> bytes:
    for raw in data.split(b"\n"):
        line = raw.strip()
        if line:
            return line.removeprefix(b"\xef\xbb\xbf")
    return b""


def is_aiperf_line(line: bytes | str) -> bool:
    """An AIPerf server-metrics record: a JSON object with ``metrics`` (family -> list of
    samples, or -> {type, samples}) and ``timestamp_ns`` or ``endpoint_url``."""
    try:
        obj = loads(line)
    except (ValueError, RecursionError):
        return False
    if not isinstance(obj, dict) or not isinstance(obj.get("metrics"), dict):
        return False
    if "timestamp_ns" not in obj and "endpoint_url" not in obj:
        return False
    return all(isinstance(v, list) or (isinstance(v, dict) and "samples" in v)
               for v in obj["metrics"].values())


def sniff(fp: BinaryIO, path: str) -> str | None:
    """``"text"`` for a Prometheus exposition, ``"aiperf"`` for AIPerf's server-metrics
    JSONL, else None. Reads the start of ``fp`` and seeks back to 0."""
    head = fp.read(65536)
    fp.seek(0)
    first = _first_line(head)
    lower = os.path.basename(path).lower()
    if first.startswith(b"{"):
        if b'"metrics"' not in first or not (b'"timestamp_ns"' in first or
                                              b'"endpoint_url"' in first):
            return None                     # a result file: the JSON readers take it
        line = b""
        while not line.strip():              # the whole first line, however long
            line = fp.readline()
            if not line:
                break
        fp.seek(0)
        return "aiperf" if is_aiperf_line(line.strip().removeprefix(b"\xef\xbb\xbf")) \
            else None
    if lower.endswith(".prom") or (lower.startswith("metrics") and lower.endswith(".txt")):
        return "text"
    text = first.decode("utf-8", errors="replace")
    if text.startswith(("# HELP ", "# TYPE ")) or _SAMPLE_LINE.fullmatch(text):
        return "text"
    return None


# ---------------------------------------------------------------------------------------
# Parsing


def _type(typ: str) -> str:
    return typ if typ in ("counter", "gauge", "histogram", "summary") else "unknown"


def _names_itself(line: str, name: str) -> bool:
    return line.startswith(name) and len(line) > len(name) and line[len(name)] in "{ \t"


def _locate_error(lines: list[str], path: str, error: Exception) -> ParseError:
    """The first line that the parser rejects on its own, as a one-line error."""
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        try:
            list(text_string_to_metric_families(line + "\n"))
        except Exception:            # the parser raises several kinds
            shown = line if len(line) <= 80 else line[:77] + "..."
            if line.startswith("#"):
                expected = ("expected '# HELP name text' or '# TYPE name counter|gauge|"
                            "histogram|summary|untyped'")
            else:
                expected = "expected a sample 'name{label=\"value\",...} number [timestamp]'"
            return ParseError(f"not a Prometheus metrics line: {shown!r}; {expected}",
                              path=path, line=number)
    return ParseError(f"not a Prometheus exposition ({type(error).__name__}: "
                      f"{str(error)[:80]})".replace("\n", " "), path=path)


def _check_comments(lines: list[str], path: str) -> list[tuple[int, dt.datetime | None]]:
    """Separator lines (with their times), checking each ``# TYPE`` names a known type."""
    separators = []
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line.startswith("#"):
            continue
        parts = line.split(None, 3)
        if len(parts) >= 2 and parts[1] == "TYPE":
            if len(parts) < 4 or parts[3].strip() not in TYPES:
                found = repr(parts[3].strip()) if len(parts) == 4 else "nothing"
                raise ParseError(f"'# TYPE' gives {found} as the type of "
                                 f"{parts[2] if len(parts) > 2 else 'no metric'}; expected "
                                 f"one of {', '.join(TYPES)}", path=path, line=number)
            continue
        if line == "# EOF":
            separators.append((number, None))
            continue
        m = _SEPARATOR.fullmatch(line)
        if m and not line.startswith(("# HELP", "# TYPE", "# UNIT")):
            when = _first_time(m.group(2))
            if m.group(1).lower() == "scrape" or when is not None:
                separators.append((number, when))
    return separators


def _text_scrapes(text: str, path: str, when: dt.datetime | None) -> list[Scrape]:
    lines = text.split("\n")          # the parser's own line splitting
    separators = _check_comments(lines, path)
    sample_lines = [(n, raw.strip()) for n, raw in enumerate(lines, 1)
                    if raw.strip() and not raw.strip().startswith("#")]
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as error:       # ValueError mostly; located below
        raise _locate_error(lines, path, error) from None
    parsed = [(fam, s) for fam in families for s in fam.samples]
    if len(parsed) != len(sample_lines):      # cannot happen with this parser: one line, one
        raise ParseError(f"read {len(parsed)} samples from {len(sample_lines)} sample lines; "
                         "expected one sample per line", path=path)
    if not parsed:
        raise ParseError("no metric samples, expected lines such as "
                         "'vllm:num_requests_running{model_name=\"m\"} 3.0'", path=path, line=1)
    scrapes: list[Scrape] = []
    current = Scrape(index=0, time=None, first_line=1, last_line=1, path=path)
    sep_time: dict[int, dt.datetime | None] = {0: None}
    seps = iter(separators + [(math.inf, None)])
    next_sep = next(seps)
    families_seen: set[str] = set()
    series_seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    last_family: Any = None
    last_line = 0

    def start(first_line: int) -> Scrape:
        nonlocal families_seen, series_seen
        scrapes.append(current)
        current.last_line = last_line
        families_seen, series_seen = set(), set()
        return Scrape(index=len(scrapes), time=None, first_line=first_line, last_line=0,
                      path=path)

    for (fam, s), (number, line) in zip(parsed, sample_lines, strict=True):
        while next_sep[0] < number:
            if current.samples:
                current = start(next_sep[0])
            else:
                current.first_line = next_sep[0]
            sep_time[current.index] = next_sep[1]
            next_sep = next(seps)
        name = s.name
        if fam.type == "counter" and not _names_itself(line, name) and name.endswith("_total") \
                and _names_itself(line, name[:-6]):
            name = name[:-6]                       # written without _total; keep it so
        key = (name, _key(s.labels))
        again = (fam is not last_family and fam.name in families_seen
                 and fam.name != getattr(last_family, "name", None)) or key in series_seen
        if again and current.samples:
            current = start(last_line + 1)
        families_seen.add(fam.name)
        series_seen.add(key)
        last_family = fam
        ts = float(s.timestamp) if s.timestamp is not None else None
        if ts is not None and _utc_from_epoch(ts) is None:
            raise ParseError(f"the timestamp of {name} reads as {ts:g} s since 1970; expected "
                             "'name{label=\"value\"} number [Unix time in ms]'", path=path,
                             line=number)
        current.samples.append(Sample(name=name, labels=dict(s.labels), value=real(s.value),
                                      line=number, family=fam.name, type=_type(fam.type),
                                      timestamp=ts))
        last_line = number
    current.last_line = last_line
    scrapes.append(current)
    named = time_from_name(path) if len(scrapes) == 1 else None
    for sc in scrapes:
        stamps = [s.timestamp for s in sc.samples if s.timestamp is not None]
        if stamps:
            sc.time, sc.time_from = dt.datetime.fromtimestamp(max(stamps), dt.UTC), "sample"
        elif sep_time.get(sc.index) is not None:
            sc.time, sc.time_from = sep_time[sc.index], "separator"
        elif named is not None:
            sc.time, sc.time_from = named, "file name"
        elif when is not None and len(scrapes) == 1:
            sc.time, sc.time_from = when, "given"
    return scrapes


def _number(value: Any, path: str, line: int, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(f"{what} is {value!r}; expected a number", path=path, line=line)
    return real(value)


def real(value: int | float) -> float:
    """A sample's value as a float; an integer beyond any float (10**400) is infinite, as
    Prometheus writes +Inf (float() would raise)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _aiperf_scrapes(text: str, path: str) -> list[Scrape]:
    scrapes = []
    expected = ("expected one AIPerf server-metrics object per line: {\"timestamp_ns\": ..., "
                "\"metrics\": {family: [{\"labels\": {...}, \"value\": x}, ...]}}")
    for number, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            obj = loads(raw)
        except (ValueError, RecursionError) as error:
            msg = getattr(error, "msg", str(error).split(":", 1)[0])
            raise ParseError(f"not JSON ({msg}); {expected}", path=path, line=number) from None
        if not isinstance(obj, dict) or not isinstance(obj.get("metrics"), dict):
            raise ParseError(f"no 'metrics' object; {expected}", path=path, line=number)
        stamp = obj.get("timestamp_ns")
        when = None
        if stamp is not None:
            when = _utc_from_epoch(_number(stamp, path, number, "timestamp_ns"))
        scrape = Scrape(index=len(scrapes), time=when, first_line=number, last_line=number,
                        time_from="aiperf" if when else None, path=path)
        for family, entry in obj["metrics"].items():
            given = None
            if isinstance(entry, dict) and isinstance(entry.get("samples"), list):
                given, entry = str(entry.get("type", "")).lower() or None, entry["samples"]
            if not isinstance(entry, list):
                raise ParseError(f"metrics[{family!r}] is not a list of samples; {expected}",
                                 path=path, line=number)
            for item in entry:
                if not isinstance(item, dict):
                    raise ParseError(f"a sample of {family!r} is not an object; {expected}",
                                     path=path, line=number)
                labels = {str(k): str(v) for k, v in (item.get("labels") or {}).items()}
                if "buckets" in item:
                    scrape.samples += _aiperf_histogram(family, labels, item, path, number)
                    continue
                if "value" not in item:
                    raise ParseError(f"a sample of {family!r} has neither 'value' nor "
                                     f"'buckets'; {expected}", path=path, line=number)
                typ = _type(given or kind_of(family) or
                            ("counter" if family.endswith("_total") else "unknown"))
                name = family + "_total" if typ == "counter" and \
                    not family.endswith("_total") else family
                scrape.samples.append(Sample(name, labels, _number(
                    item["value"], path, number, f"{family} value"), number,
                    family.removesuffix("_total") if typ == "counter" else family, typ))
        scrapes.append(scrape)
    if not scrapes:
        raise ParseError(f"no scrapes; {expected}", path=path)
    return scrapes


def _aiperf_histogram(family: str, labels: dict[str, str], item: dict, path: str,
                      line: int) -> list[Sample]:
    if not isinstance(item["buckets"], dict):
        raise ParseError(f"{family} buckets is not an object of le -> count", path=path,
                         line=line)
    out = []
    for le, count in item["buckets"].items():
        out.append(Sample(f"{family}_bucket", {**labels, "le": str(le)},
                          _number(count, path, line, f"{family} bucket {le}"), line, family,
                          "histogram"))
    for part in ("sum", "count"):
        if item.get(part) is not None:
            out.append(Sample(f"{family}_{part}", dict(labels),
                              _number(item[part], path, line, f"{family} {part}"), line,
                              family, "histogram"))
    return out


def parse_scrapes(text: str, path: str, when: dt.datetime | None = None) -> list[Scrape]:
    """The scrapes of a metrics file: a text exposition (one scrape or several) or AIPerf's
    server-metrics JSONL. ``when`` is the time of a single scrape whose file tells none
    (from run.yaml). Raises ParseError naming the file and line of what it cannot read."""
    text = text.removeprefix("\ufeff")
    if text.lstrip().startswith("{"):
        return _aiperf_scrapes(text, path)
    return _text_scrapes(text, path, when)


def metric_records(text: str, path: str, engine: str = "auto",
                   summary: Any = None) -> Iterator[dict[str, Any]]:
    """One record of kind ``metric`` per sample (see ``record``); fills in ``summary``
    (a logscan.Summary): engine from the ``vllm:`` / ``sglang:`` prefixes, line and
    record counts."""
    scrapes = parse_scrapes(text, path)
    if summary is not None:
        summary.lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        prefixes = Counter(s.engine for sc in scrapes for s in sc.samples if s.engine)
        told = prefixes.most_common(1)[0][0] if prefixes else "unknown"
        summary.engine = engine if engine != "auto" else told
    for sc in scrapes:
        for s in sc.samples:
            if summary is not None:
                summary.counts["metric"] = summary.counts.get("metric", 0) + 1
            yield record(s, sc)


def record(s: Sample, scrape: Scrape) -> dict[str, Any]:
    """``{"kind": "metric", "line", "name", "labels", "value", "canonical", "type",
    "scrape", "ts"}``; ``ts`` is the sample's own timestamp, else its scrape's time."""
    ts = dt.datetime.fromtimestamp(s.timestamp, dt.UTC) if s.timestamp is not None \
        else scrape.time
    return {"kind": "metric", "line": s.line, "name": s.name, "labels": s.labels,
            "value": s.value, "canonical": s.canonical, "type": s.type,
            "scrape": scrape.index, "ts": iso(ts)}


# ---------------------------------------------------------------------------------------
# Differences between scrapes, and quantiles


def _created_of(scrape: Scrape, s: Sample) -> float | None:
    """The ``_created`` time of the series ``s`` belongs to, when the scrape has one."""
    base = s.name
    for suffix in ("_total", "_bucket", "_count", "_sum"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    created = scrape.get(base + "_created", {k: v for k, v in s.labels.items() if k != "le"})
    return created.value if created is not None else None


def _show(s: Sample) -> str:
    labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
    return f"{s.name}{{{labels}}}" if labels else s.name


def series_deltas(before: Scrape, after: Scrape, name: str,
                  labels: Mapping[str, str] | None = None) -> Delta:
    """Per series (exposed name and labels) ``after - before`` for the samples ``name``
    (exposed or canonical) matching ``labels``, as a dict; or None and the reason: no such
    series, a series gone, a value that went down, a ``_created`` time that changed (a
    restart: never differenced across), or scrapes out of order. A series that appears only
    in ``after`` counts from zero."""
    old = {(s.name, _key(s.labels)): s for s in before.select(name, labels)}
    new = {(s.name, _key(s.labels)): s for s in after.select(name, labels)}
    where = f"{before.where()} and {after.where()}"
    if not new:
        return Delta(None, f"no series {name} in {after.where()}" +
                     (" (present in the earlier scrape: a restart?)" if old else ""))
    if before.time and after.time and _comparable(before.time, after.time) and \
            after.time < before.time:
        return Delta(None, f"the scrape at {after.where()} ({iso(after.time)}) is earlier than "
                           f"the one at {before.where()} ({iso(before.time)})")
    for key, s in old.items():
        if key not in new:
            return Delta(None, f"{_show(s)} ({before.where(s.line)}) is missing from "
                               f"{after.where()}: the server restarted between them")
    out = {}
    for key, b in new.items():
        a = old.get(key)
        if math.isnan(b.value) or (a is not None and math.isnan(a.value)):
            return Delta(None, f"{_show(b)} is NaN in {where}")
        if a is None:
            out[key] = b.value
            continue
        if b.value < a.value:
            return Delta(None, f"counter reset: {_show(b)} went down from {a.value:g} "
                               f"({before.where(a.line)}) to {b.value:g} "
                               f"({after.where(b.line)}); not differenced across a restart")
        ca, cb = _created_of(before, a), _created_of(after, b)
        if ca is not None and cb is not None and ca != cb:
            return Delta(None, f"counter reset: the created time of {_show(b)} changed from "
                               f"{ca:.3f} to {cb:.3f} between {where}; not differenced "
                               "across a restart")
        out[key] = b.value - a.value
    return Delta(out)


def _comparable(a: dt.datetime, b: dt.datetime) -> bool:
    return (a.tzinfo is None) == (b.tzinfo is None)


def counter_delta(before: Scrape, after: Scrape, name: str,
                  labels: Mapping[str, str] | None = None) -> Delta:
    """How much a counter grew between two scrapes, summed over its series that match
    ``labels`` (e.g. over the data-parallel ``engine`` ranks); ``name`` is exposed
    (``vllm:generation_tokens_total``) or canonical (``generation_tokens_total``). Returns
    ``Delta(value, None)``, or ``Delta(None, reason)`` across a reset or when the counter is
    missing."""
    per_series = series_deltas(before, after, name, labels)
    if per_series.value is None:
        return per_series
    return Delta(sum(per_series.value.values()))


def histogram_buckets(scrape: Scrape, name: str,
                      labels: Mapping[str, str] | None = None) -> list[tuple[float, float]]:
    """Cumulative buckets ``[(le, count), ...]`` of histogram ``name`` (family name, exposed
    or canonical, without ``_bucket``) in one scrape, summed over the matching series."""
    sums: dict[float, float] = {}
    for s in scrape.select(name + "_bucket", labels):
        le = float(s.labels["le"])
        sums[le] = sums.get(le, 0.0) + s.value
    return sorted(sums.items())


def histogram_delta(before: Scrape, after: Scrape, name: str,
                    labels: Mapping[str, str] | None = None) -> Delta:
    """The buckets of the observations made between two scrapes (``[(le, count), ...]``,
    summed over the matching series), or None and the reason (a reset, as for counters)."""
    per_series = series_deltas(before, after, name + "_bucket", labels)
    if per_series.value is None:
        return per_series
    sums: dict[float, float] = {}
    for (_, key), value in per_series.value.items():
        le = float(dict(key)["le"])
        sums[le] = sums.get(le, 0.0) + value
    return Delta(sorted(sums.items()))


