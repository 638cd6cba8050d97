"""The one normalised shape every benchmark client's results are read into.

A client module (``vllm.py``, ``guidellm.py``, …) looks at a decoded file (a `Doc`) and, when
it recognises the content, returns `Point`s: one per benchmark point the file holds, each
with the contract fields of `FIELDS`, what load and scenario the file itself records, and
its per-request rows. Each client's own definition of every latency it reports travels with
the point (`definitions`), so the report can print it beside the numbers and refuse to
compare points whose definitions differ.

Units after normalisation: durations in s, latencies in ms, throughputs per s, tokens as
counts. ``request_rate`` is a float or the string ``"inf"``; ``max_concurrency`` is None
when the load was unbounded by concurrency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ...core.records import DECLARED, DECLARED_CLIENT, declared_text  # noqa: F401

# the one redaction, under the name the client modules import from here
from ...core.redact import redact  # noqa: F401

CLIENTS = ("vllm-bench-serve", "sglang-bench-serving", "guidellm", "aiperf", "genai-perf",
           "genai-bench", "llmperf", "vllm-nightly-aggregate", DECLARED_CLIENT)
METRICS = ("ttft", "tpot", "itl", "e2el")
STATS = ("mean", "median", "p90", "p99", "std")
COUNTS = ("duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
          "max_concurrency", "request_rate", "request_throughput", "output_throughput",
          "input_throughput")
# what the client was asked (a request count or a duration bounds the run; a share of
# requests to cancel on purpose, %) and how many requests it cancelled as asked (counted
# among ``failed`` by the client, never a failure of the server)
ASKED = ("requests_asked", "duration_asked", "cancellation_rate", "cancelled")
FIELDS = COUNTS + ASKED + tuple(f"{s}_{m}_ms" for m in METRICS for s in STATS)
REQUEST_FIELDS = ("ttft_ms", "e2el_ms", "input_tokens", "output_tokens", "error")


@dataclass
class Doc:
    """A file's decoded content, handed to every client's ``sniff``/``parse``.

    ``kind`` is "json" (``value`` is the document), "jsonl" (``value`` is a list of
    ``(line, object)``), "csv" (``value`` is the text with CRLF normalised) or "text".
    """

    path: str                 # as shown in messages (repo-relative or as given)
    name: str                 # file name only
    kind: str
    value: Any
    text: str = ""


@dataclass
class Point:
    """One benchmark point of one client file, normalised."""

    client: str                          # one of CLIENTS
    file: str                            # Doc.path
    where: str                           # locator in the file: "line 3", "benchmarks[0]", "[1]"
    line: int | None                     # 1-based line of the record, when it has one
    fields: dict[str, Any]               # keys from FIELDS only; only what the file holds
    # what the file records about the scenario: dataset, input_tokens, output_tokens (the
    # target or, failing that, the mean), and the distribution as written ("N(2000,200)")
    scenario: dict[str, Any] = field(default_factory=dict)
    # load as recorded: {"kind": "concurrency" | "rate" | "unbounded" | "synchronous" |
    #  "unstated", "max_concurrency": int | None, "request_rate": float | "inf" | None,
    #  "arrival": "poisson" | "constant" | "gamma" | None}. "unstated": the file records
    #  neither a concurrency nor a rate, so the load is unknown (never read as unbounded)
    load: dict[str, Any] = field(default_factory=dict)
    # other settings the file records that tell points apart: run_number, max_num_seqs,
    # num_prompts, tag, strategy, … (never command lines or secrets)
    params: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    engine: str | None = None            # "vllm", "sglang", … when the content says so
    date: str | None = None              # ISO date or datetime when the file records one
    definitions: dict[str, str] = field(default_factory=dict)   # metric -> definition code
    requests: list[dict[str, Any]] = field(default_factory=list)
    # keys of the file each contract field came from, for provenance: field -> JSON key path
    sources: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # "summary": a point with statistics; "requests": only per-request rows, to be attached
    # to the summary point of the same run (AIPerf's profile_export.jsonl); "duplicate": the
    # same point as another view of the same run (AIPerf's CSV beside its JSON)
    role: str = "summary"

    def record(self) -> dict[str, Any]:
        """The point as one flat ``bench_result`` record (``benchreport parse --json``)."""
        rec: dict[str, Any] = {"kind": "bench_result", "client": self.client,
                               "where": self.where, "line": self.line}
        for key in FIELDS:
            if key in self.fields:
                rec[key] = self.fields[key]
        rec["failed"] = self.fields.get("failed")
        for key in ("dataset", "input_tokens", "output_tokens"):
            if key in self.scenario:
                rec[f"scenario_{key}"] = self.scenario[key]
        rec["load_kind"] = self.load.get("kind")
        for key, value in sorted(self.params.items()):
            rec[f"param_{key}"] = value
        rec["model"] = self.model
        rec["engine"] = self.engine
        rec["date"] = self.date
        rec["definitions"] = dict(sorted(self.definitions.items()))
        rec["requests"] = len(self.requests)
        return rec


# Definitions of each metric, keyed by a short code that points carry. The report prints
# the text; two points are compared on a metric only when their codes agree.
DEFINITIONS = {
    "ttft.first-token": "time from sending the request to the first streamed token",
    "tpot.excl-first": "(E2E − TTFT) ÷ (output tokens − 1), per request, then over requests",
    "itl.per-chunk": "gap between consecutive streamed chunks, pooled over all requests",
    "itl.per-token": "gap between consecutive streamed chunks divided evenly over the tokens "
                     "each chunk brought, pooled over all requests (sglang.bench_serving with "
                     "its native backend)",
    "itl.unknown": "either the gap between consecutive streamed chunks, or that gap divided "
                   "by the mean accepted length of speculative decoding (sglang.bench_serving "
                   "OpenAI-compatible backends from late 2025 on); the file does not say which",
    "itl.mean-per-request": "each request's mean gap between chunks, then over requests",
    "itl.excl-first": "(E2E − TTFT) ÷ (output tokens − 1) per request (AIPerf/GenAI-Perf "
                      "inter-token latency)",
    "e2el.request": "time from sending the request to its last token",
}


def declared_code(text: str) -> str:
    """The definition code of a user's own words (``core.records.DECLARED``; redacted: the
    code is stored as it is)."""
    return DECLARED + " ".join(redact(text).split())


UNSTATED = {"kind": "unstated", "max_concurrency": None, "request_rate": None,
            "arrival": None}


def rate_value(value: Any) -> float | str | None:
    """A request rate as a float, or ``"inf"`` for Infinity / "inf" / "Infinity".

    >>> rate_value(float("inf")), rate_value("inf"), rate_value("4"), rate_value(None)
    ('inf', 'inf', 4.0, None)
    """
    if value is None:
        return None
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("inf", "infinity", "+inf"):
            return "inf"
        try:
            value = float(low.replace(",", ""))
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None                          # a list or an object is no rate
    value = float(value)
    return "inf" if math.isinf(value) else value


def number(value: Any) -> float | None:
    """A number from a JSON value or a CSV cell ("1,234.5", "", None → None).

    >>> number("1,234.5"), number(""), number(7), number("n/a")
    (1234.5, None, 7.0, None)
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip().strip('"').replace(",", "")
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def epoch_iso(seconds: float | None) -> str | None:
    """A Unix time in s as ISO 8601 (UTC, to the second); None for none, for 0 or less, and
    for a time past any calendar's (year 10,000 on), which no clock of a run shows.

    >>> epoch_iso(1700000000.5), epoch_iso(1e30), epoch_iso(None)
    ('2023-11-14T22:13:20+00:00', None, None)
    """
    if seconds is None or not seconds > 0:
        return None
    try:
        return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")
    except (OverflowError, ValueError, OSError):
        return None


def finite(value: Any) -> float | None:
    """A finite number, or None (for absent, unparsable, NaN and ±Infinity values)."""
    x = number(value)
    return x if x is not None and math.isfinite(x) else None


def dig(data: Any, *keys: str) -> Any:
    """``data[k1][k2]…``, or None as soon as a level is missing or not an object."""
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


# ---------------------------------------------------------------------------------------
# Responses that were not streamed

# A streamed response of more than one token reaches its first token strictly before its
# last; within this fraction of the E2E latency (or above it) the two are the same moment.
_SAME_MOMENT = 1e-3
NOT_STREAMED = ("ttft", "tpot", "itl")


def _same_moment(ttft: float, e2e: float) -> bool:
    return ttft >= e2e - _SAME_MOMENT * abs(e2e)


def _ms(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value else "0.0"


def unstreamed(stats: dict[str, dict[str, float]], requests: list[dict[str, Any]],
               tokens_per_request: float | None) -> str | None:
    """Why a serving record's responses were not streamed, or None when nothing shows it.

    ``stats`` is the file's own statistics (metric -> statistic -> ms, zeros included),
    ``requests`` the point's per-request rows, ``tokens_per_request`` the output tokens per
    completed request when the file gives both counts. A client that reads a whole,
    unstreamed response times its "first token" when the response arrives, so its TTFT is
    the E2E latency and it records no gap between chunks. The record was not streamed when

    * its per-request rows (when they carry times) show no chunk gap in any request and
      either every request's TTFT is its E2E latency or their gap lists are all empty
      while some request brought more than one token; or, without such rows,
    * it states no ITL but 0, and either every TTFT statistic is (within 0.1 %) the E2E
      statistic of the same kind or above it, or the requests brought more than one
      output token each on average (a streamed run of such requests has gaps).

    Nothing is concluded from requests of one token (their TTFT is their E2E latency), and
    a gap between chunks in any request's row shows streaming whatever the statistics say.

    >>> unstreamed({"ttft": {"median": 941.55}, "e2el": {"median": 941.53},
    ...             "itl": {"median": 0.0}}, [], 254.7).split(", ")
    ['median TTFT 941.55 ms', 'median E2E 941.53 ms', 'median ITL 0.0 ms over 254.7 output \
tokens per request']
    >>> unstreamed({"ttft": {"median": 50.0}, "e2el": {"median": 480.0},
    ...             "itl": {"median": 5.0}}, [], 10.0) is None
    True
    """
    if tokens_per_request is not None and tokens_per_request <= 1:
        return None
    timed = [r for r in requests if not r.get("error") and r.get("ttft_ms") is not None]
    if timed:
        if any(r.get("itl_ms") for r in timed):
            return None                                  # some request streamed chunks
        found = _unstreamed_rows(timed)
        if found:
            return found
    ttft, e2e, itl = (stats.get(m, {}) for m in ("ttft", "e2el", "itl"))
    if not ttft or any(v != 0 for v in itl.values()):
        return None
    kinds = [s for s in ("median", "mean", "p90", "p99") if s in ttft and s in e2e]
    same = bool(kinds) and all(_same_moment(ttft[s], e2e[s]) for s in kinds)
    many = bool(itl) and tokens_per_request is not None and tokens_per_request > 1
    if not (same or many):
        return None
    shown = kinds[:1] or [next(iter(ttft))]
    parts = [f"{s} TTFT {_ms(ttft[s])} ms" for s in shown]
    parts += [f"{s} E2E {_ms(e2e[s])} ms" for s in shown if s in e2e]
    if itl:
        s = "median" if "median" in itl else next(iter(itl))
        parts.append(f"{s} ITL 0.0 ms" + (f" over {tokens_per_request:.1f} output tokens per "
                                          "request" if tokens_per_request else ""))
    else:
        parts.append("no ITL")
    return ", ".join(parts)


def _unstreamed_rows(rows: list[dict[str, Any]]) -> str | None:
    gaps = [r.get("itl_ms") for r in rows]
    if all(r.get("output_tokens") is not None and r["output_tokens"] <= 1 for r in rows):
        return None
    both = [r for r in rows if r.get("e2el_ms") is not None]
    same = len(both) == len(rows) and all(_same_moment(r["ttft_ms"], r["e2el_ms"])
                                          for r in both)
    empty = all(g is not None for g in gaps) and any(
        r.get("output_tokens") is None or r["output_tokens"] > 1 for r in rows)
    if same:
        return (f"every one of the {len(rows)} requests' TTFT is its E2E latency"
                + (", and none has a gap between chunks" if empty else ""))
    if empty:
        return f"none of the {len(rows)} requests has a gap between chunks"
    return None


def drop_unstreamed(p: Point, here: str, evidence: str) -> None:
    """Leave TTFT, TPOT and ITL out of a point whose responses were not streamed (so they
    read as not measured), with one warning that gives the evidence."""
    for key in [k for k in p.fields if any(k.endswith(f"_{m}_ms") for m in NOT_STREAMED)]:
        del p.fields[key]
        p.sources.pop(key, None)
    for metric in NOT_STREAMED:
        p.definitions.pop(metric, None)
    for row in p.requests:
        for key in ("ttft_ms", "itl_ms"):
            if key in row:
                row[key] = None
    # the all-zero notes of the same metrics say less than this one
    p.warnings = [w for w in p.warnings if not (w.startswith(here + ":") and any(
        f"measured no {m.upper()} " in w for m in NOT_STREAMED))]
    p.warnings.append(f"{here}: the responses were not streamed ({evidence}): what the file "
                      "calls TTFT is the time to the whole response; TTFT, TPOT and ITL are "
                      "left out (not measured)")
