"""Prefill: total prefill throughput while prefilling, and per-request chunk decay.

vLLM logs prompt throughput per 10-s interval: only the phase's throughput is derivable
(the first and last intervals of the phase are partial and left out).

SGLang logs one Prefill line per prefill batch, with #new-seq (requests admitted in the
batch), #new-token (tokens computed), #cached-token (prompt tokens of the admitted requests
found in the prefix cache, not computed) and the input throughput: the batch's tokens ÷ the
time since the previous Prefill line. A batch is not one request's chunk: the scheduler puts
the in-progress chunked request first and fills the rest of the budget with newly admitted
requests, so one batch can hold the tail of request k and the head of request k+1. The
tokens of every request are therefore accounted through the batches, from the prompt
lengths (the result file's ``input_lens`` in order, else the workload's input length):

* a batch is *pure* (one request's tokens) or *mixed* (several, with the split known);
* *partial* when it holds fewer tokens than the prefill budget (the window's largest
  #new-token): small batches run slower from fixed overheads;
* its interval is *prefill only* when the line before it in the window is a Prefill line
  that left prompt work pending (a chunked request in progress, or queued prompts). The
  window's first Prefill line counts as prefill only if no Decode line precedes it in the
  window (its interval is taken to be its own batch).

A request's chunk sequence uses only clean chunks: pure, full, interval prefill only. When
the tokens cannot be accounted (lengths that do not fit the log, lines from before the
window) the requests are followed from #new-seq alone, and the figures say the accounting
is approximate. SGLang's #new-seq is len(can_run_list), which holds the chunked request
being continued: a continuation chunk logs #new-seq 1, a batch with the tail of request k
and the head of k+1 logs 2 (#cached-token counts only the admitted requests' prefix-cache
hits). Logs that count only newly admitted requests (continuations at 0) are read too.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import partial

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.methods import Said, capital, english, joined, said, statistic
from ..core.records import Ingested, Run
from ..core.verdicts import MIXED, NO_LOG, NONE, PURE, UNKNOWN_BATCH

EVENTS = ("memory_event", "jit_event")     # runtime events that stall the engine

# What the time a Prefill line's throughput covers holds.
PREFILL = "prefill"      # only prefill: the previous Prefill line left prompt work pending
FIRST = "first"          # the window's first line, no Decode line before it: assumed prefill
DECODE = "decode"        # a Decode line comes between: decode steps ran in the interval
IDLE = "idle"            # the previous Prefill line left no prompt work: decode or idle time


class Unaccountable(ValueError):
    """The Prefill lines and the prompt lengths do not fit together (``why``: where, as a
    method sentence)."""

    def __init__(self, why: Said) -> None:
        super().__init__(english(why))
        self.why = why


@dataclass(frozen=True)
class Share:
    """The tokens of one request in one batch."""

    request: int          # 1-based, in order of admission in the window
    tokens: int           # prompt tokens computed for it in this batch
    cached: int           # its context before this batch: prefix-cache hits + earlier chunks
    starts: bool          # the request's prompt begins in this batch
    completes: bool       # ... and ends in it
    known: bool = True    # tokens known (else: approximate accounting of a batch holding
                          # several requests, whose split the log does not give)


@dataclass(frozen=True)
class Batch:
    """One Prefill line, classified."""

    line: int
    file: str
    sha256: str
    tps: float | None
    new_token: int
    new_seq: int
    cached_token: int
    shares: tuple[Share, ...]      # empty when the request is unknown
    partial: bool                  # fewer tokens than the budget
    interval: str                  # PREFILL, FIRST, DECODE or IDLE
    budget: int
    exact: bool                    # shares from token accounting (else: the #new-seq rule)

    @property
    def mixed(self) -> bool:
        return len(self.shares) > 1

    @property
    def prefill_only(self) -> bool:
        return self.interval in (PREFILL, FIRST)

    @property
    def clean(self) -> bool:
        """Usable as a chunk of one request: pure, full, interval prefill only."""
        return (self.tps is not None and len(self.shares) == 1 and not self.partial
                and self.prefill_only)

    def share(self, request: int) -> Share | None:
        return next((s for s in self.shares if s.request == request), None)

    def split(self) -> str:
        """How the batch's tokens divide between requests, in words."""
        return english(self.split_said())

    def split_said(self) -> Said:
        """``split`` as a method sentence."""
        tokens = f"{self.new_token:,}"
        if not self.shares:
            return said("prefill.split_before", tokens=tokens)
        if not all(s.known for s in self.shares):
            return said("prefill.split_unknown", tokens=tokens,
                        requests=[said("prefill.request", n=s.request) for s in self.shares])
        parts = []
        for i, s in enumerate(self.shares):
            at = said("prefill.at_cached", cached=f"{s.cached:,}") if i == 0 or s.cached else ""
            parts.append(said("prefill.part_first" if i == 0 else "prefill.part",
                              tokens=f"{s.tokens:,}", request=s.request, at=at))
        return said("prefill.parts", parts=parts)

    def reasons(self) -> list[str]:
        """Why the batch is not a clean chunk (empty when it is one)."""
        return [english(r) for r in self.reasons_said()]

    def reasons_said(self) -> list[Said]:
        """``reasons`` as method sentences."""
        out = []
        if not self.shares:
            out.append(said("prefill.reason_before", tokens=f"{self.new_token:,}"))
        elif self.mixed:
            out.append(said("prefill.reason_mixed", split=self.split_said()))
        if self.partial:
            out.append(said("prefill.reason_partial", tokens=f"{self.new_token:,}",
                            budget=f"{self.budget:,}"))
        if self.interval == DECODE:
            out.append(said("prefill.reason_decode"))
        elif self.interval == IDLE:
            out.append(said("prefill.reason_idle"))
        if self.tps is None:
            out.append(said("prefill.reason_no_tps"))
        return out


@dataclass(frozen=True)
class Accounting:
    """Every Prefill line of one benchmark window, classified."""

    batches: tuple[Batch, ...]
    exact: bool
    budget: int
    lengths: dict[int, int]        # request -> prompt length used (exact accounting)
    note: Said                     # how the tokens were accounted, or why only approximately
    length_source: Source | None   # the result file's input_lens, when used


@dataclass(frozen=True)
class Chunks:
    """One request's prefill batches; the chunk sequence is its clean ones."""

    request: int                       # 1-based, in order of admission in the window
    input_len: int | None
    batches: tuple[Batch, ...]         # every batch holding tokens of this request
    next_start: Batch | None           # the batch where the next request's prompt begins
    next_clean: Batch | None           # the next request's first clean chunk
    exact: bool

    @property
    def clean(self) -> tuple[Batch, ...]:
        return tuple(b for b in self.batches if b.clean)

    @property
    def excluded(self) -> tuple[Batch, ...]:
        return tuple(b for b in self.batches if not b.clean)

    @property
    def tps(self) -> tuple[float, ...]:
        return tuple(float(b.tps) for b in self.clean if b.tps is not None)

    @property
    def cached(self) -> tuple[int, ...]:
        """The request's context before each clean chunk."""
        return tuple(self.cached_before(b) for b in self.clean)

    @property
    def lines(self) -> tuple[int, ...]:
        return tuple(b.line for b in self.clean)

    def cached_before(self, batch: Batch) -> int:
        s = batch.share(self.request)
        return s.cached if s else 0

    @property
    def next_first(self) -> float | None:
        return self.next_start.tps if self.next_start else None

    @property
    def next_line(self) -> int | None:
        return self.next_start.line if self.next_start else None


# --- reading the records --------------------------------------------------------------

def _int(rec: dict, key: str, default: int | None = 0) -> int | None:
    v = rec.get(key)
    if v is None or v == "":
        return default
    try:
        return int(float(v))
    except (TypeError, ValueError):
        return default


def _tps(rec: dict) -> float | None:
    v = rec.get("input_tps")
    if v is None or v == "":
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _order(rec: dict) -> tuple[str, int]:
    return (str(rec.get("file", "")), int(rec["line"]))


def _queued(rec: dict) -> bool:
    """The line reports prompt work still waiting (#pending-token, else #queue-req)."""
    pending = _int(rec, "pending_token", None)
    if pending is not None:
        return pending > 0
    return (_int(rec, "queue_req", 0) or 0) > 0


def result_lengths(ing: Ingested, engine: str, workload: str) -> tuple[list[int], Source | None]:
    """The prompt lengths the result file lists for the requests that succeeded, in request
    order, and where they are."""
    for entry in ing.results:
        if entry.engine == engine and entry.workload == workload:
            # the requests that succeeded, in the file's order (failed ones left out)
            lens = [r.get("input_tokens") for r in entry.ok]
            if lens and all(isinstance(x, int | float) for x in lens):
                return [int(x) for x in lens], Source(
                    path=entry.file.rel, sha256=entry.file.sha256, key="input_lens",
                    lines=(entry.line,))
    return [], None


# --- accounting -------------------------------------------------------------------------

def account(rows: list[dict], lengths: list[int], default_len: int | None = None, *,
            counts_in_progress: bool = False) -> tuple[list[tuple[Share, ...]], list[int], bool]:
    """Follow each request's prompt tokens through the Prefill lines ``rows`` (in order).

    Per line: the in-progress chunked request (if any) takes the batch's tokens first, then
    the requests admitted in it (``#new-seq``; with ``counts_in_progress`` the count
    includes the in-progress request) take theirs, each needing its prompt length minus
    its prefix-cache hits (``#cached-token``, for the admitted requests; split evenly when
    several are admitted with hits: the line gives only the total). Only the last admitted
    request may stop before its prompt ends. Request i (1-based) has prompt length
    ``lengths[i - 1]``, or ``default_len`` past the list's end.

    Returns the shares per line, the in-progress request's remaining tokens after each
    line, and whether a cache split had to be guessed. Raises Unaccountable when the line
    and the lengths do not fit.
    """
    out: list[tuple[Share, ...]] = []
    remaining_after: list[int] = []
    active: tuple[int, int, int] | None = None    # request, tokens left, context so far
    admitted = 0
    guessed = False
    for r in rows:
        line = r.get("line")
        total = _int(r, "new_token", 0) or 0
        left = total
        new = _int(r, "new_seq", None)
        if new is None:
            raise Unaccountable(said("prefill.why_no_seq", line=line))
        hits = _int(r, "cached_token", 0) or 0
        shares: list[Share] = []
        if counts_in_progress and active is not None:
            new -= 1
        if new < 0:
            raise Unaccountable(said("prefill.why_in_progress", line=line, n=new + 1,
                                     request=active[0]))
        if active is not None:
            req, rem, ctx = active
            take = min(rem, left)
            if take <= 0:
                raise Unaccountable(said("prefill.why_no_tokens_left", line=line, request=req,
                                         left=f"{rem:,}"))
            shares.append(Share(req, take, ctx, False, take == rem))
            left -= take
            active = (req, rem - take, ctx + take) if take < rem else None
            if active is not None and new:
                raise Unaccountable(said("prefill.why_admitted", line=line, n=new, request=req,
                                         left=f"{rem - take:,}"))
        elif new == 0:
            raise Unaccountable(said("prefill.why_zero", line=line, zero=0))
        admitted_ids = list(range(admitted + 1, admitted + new + 1))
        lens = []
        for i in admitted_ids:
            n = lengths[i - 1] if i <= len(lengths) else default_len
            if n is None:
                raise Unaccountable(said("prefill.why_no_length", line=line, request=i,
                                         listed=len(lengths)))
            lens.append(n)
        split = [0] * new
        if new == 1:
            split = [hits]
        elif new > 1 and hits:
            guessed = True
            each, extra = divmod(hits, new)
            split = [each + (1 if j < extra else 0) for j in range(new)]
        for j, (i, n, c) in enumerate(zip(admitted_ids, lens, split, strict=True)):
            need = n - c
            take = min(need, left)
            if need <= 0 or take <= 0:
                raise Unaccountable(said("prefill.why_no_tokens", line=line, request=i,
                                         tokens=f"{n:,}", cached=f"{c:,}"))
            if take < need and j < new - 1:
                raise Unaccountable(said("prefill.why_stops", line=line, request=i))
            shares.append(Share(i, take, c, True, take == need))
            left -= take
            if take < need:
                active = (i, need - take, c + take)
        admitted += new
        if left:
            raise Unaccountable(said("prefill.why_left", line=line, left=f"{left:,}",
                                     total=f"{total:,}"))
        out.append(tuple(shares))
        remaining_after.append(active[1] if active else 0)
    return out, remaining_after, guessed


def _counts_in_progress(rows: list[dict]) -> bool:
    """Whether the log's #new-seq counts the chunked request being continued, as SGLang
    does (len(can_run_list)): then no Prefill line has #new-seq 0."""
    return bool(rows) and all((_int(r, "new_seq", 0) or 0) >= 1 for r in rows)


def _continues(prev: dict, cur: dict, budget: int) -> bool:
    """With #new-seq counting the in-progress request: whether a chunked request left by
    line ``prev`` continues in line ``cur``. SGLang cuts only the last request of a full
    batch, so ``prev`` is full; its #pending-token (queued prompts plus the chunked
    request's rest) is above 0; and #queue-req (logged with #pending-token: the waiting
    queue after admission) did not fall by all of ``cur``'s #new-seq (every request of
    ``cur`` from the queue)."""
    if (_int(prev, "new_token", 0) or 0) < budget:
        return False
    pending = _int(prev, "pending_token", None)
    if pending is None:
        return True
    q0, q1 = _int(prev, "queue_req", None), _int(cur, "queue_req", None)
    fell = q0 - q1 if q0 is not None and q1 is not None else 0
    return pending > 0 and fell < (_int(cur, "new_seq", 0) or 0)


def _line_shares(r: dict, req: int, ctx: int, cont: bool, in_progress: bool
                 ) -> tuple[tuple[Share, ...], int, int]:
    """One line's approximate shares, and the last request and its context after it."""
    n = _int(r, "new_token", 0) or 0
    new = (_int(r, "new_seq", 0) or 0) - (1 if cont and in_progress else 0)
    if new <= 0:           # the request in progress goes on (none known: before the window)
        return ((Share(req, n, ctx, False, False),) if req else ()), req, ctx + n
    tail = [Share(req, 0, ctx, False, True, known=False)] if cont and in_progress and req else []
    whole = [Share(k, 0, 0, True, True, known=False) for k in range(req + 1, req + new)]
    hits = _int(r, "cached_token", 0) or 0
    last = Share(req + new, n, hits, True, False, known=not (tail or whole))
    return tuple(tail + whole + [last]), req + new, hits + n


def _by_rule(rows: list[dict], budget: int) -> tuple[list[tuple[Share, ...]], list[int]]:
    """Approximate shares, from #new-seq alone: a line holds the request in progress (if
    one is) and the requests its #new-seq admits; the last one admitted holds the line's
    tokens. Where #new-seq counts the in-progress request too (SGLang: no line has
    #new-seq 0), a chunked request is taken to continue after a full batch that left
    prompt tokens pending (``_continues``); otherwise a #new-seq 0 line continues it. The
    window's first line is taken to start a request unless its #new-seq is 0. The second
    list: 1 where a request is taken to be in progress after the line, else 0."""
    in_progress = _counts_in_progress(rows)
    cont = [(_int(r, "new_seq", 0) or 0) == 0 if i == 0 or not in_progress
            else _continues(rows[i - 1], r, budget) for i, r in enumerate(rows)]
    out: list[tuple[Share, ...]] = []
    req, ctx = 0, 0
    for i, r in enumerate(rows):
        shares, req, ctx = _line_shares(r, req, ctx, cont[i], in_progress)
        out.append(shares)
    return out, [int(c) for c in cont[1:]] + [0]


def window_accounting(ing: Ingested, engine: str, workload: str,
                      lengths: list[int] | None = None, default_len: int | None = None,
                      budget: int | None = None) -> Accounting | None:
    """Every Prefill line of the window with its requests' shares, its fullness and what its
    interval holds; None when the window has no Prefill line.

    ``lengths``: the prompt lengths in request order (default: the result file's
    ``input_lens``); ``default_len`` for requests past their end; ``budget``: the prefill
    token budget (default: the window's largest #new-token)."""
    rows = sorted(ing.in_window("prefill_batch", engine, workload), key=_order)
    if not rows:
        return None
    src = None
    if lengths is None:
        lengths, src = result_lengths(ing, engine, workload)
    budget = budget or max(_int(r, "new_token", 0) or 0 for r in rows)
    shares, remaining, guessed, exact, why = _shares(rows, lengths, default_len, budget)
    n = max((s.request for row in shares for s in row), default=0)
    how_long = _lengths_text(src, lengths, default_len, extend=default_len is not None
                             and (n > len(lengths) or not exact))
    note = _accounting_note(rows, exact, why, how_long, guessed)
    intervals = _intervals(rows, ing.in_window("decode_batch", engine, workload), remaining)
    batches = [_batch(r, shares[i], intervals[i], budget, exact) for i, r in enumerate(rows)]
    lens = _started_lengths(batches, lengths, default_len) if exact else {}
    return Accounting(batches=tuple(batches), exact=exact, budget=budget, lengths=lens,
                      note=note, length_source=src)


def _shares(rows: list[dict], lengths: list[int], default_len: int | None, budget: int
            ) -> tuple[list[tuple[Share, ...]], list[int], bool, bool, Said | str]:
    """The shares per line and the in-progress request's remaining tokens after each, by
    ``account`` (#new-seq without, then with the in-progress request) else by rule; with
    whether a cache split was guessed, whether the accounting is exact, and: when exact,
    what the note adds about #new-seq; else why it is not."""
    try:
        shares, remaining, guessed = account(rows, lengths, default_len)
        return shares, remaining, guessed, True, ""
    except Unaccountable as first:
        try:
            shares, remaining, guessed = account(rows, lengths, default_len,
                                                 counts_in_progress=True)
            return shares, remaining, guessed, True, said("prefill.counts_in_progress")
        except Unaccountable:
            shares, remaining = _by_rule(rows, budget)
            return shares, remaining, False, False, first.why


def _lengths_text(src: Source | None, lengths: list[int], default_len: int | None,
                  extend: bool) -> Said | str:
    """Where the prompt lengths came from, in words; ``extend``: the workload's input
    length ``default_len`` is used past (or instead of) them."""
    base = (said("prefill.lengths_from", path=src.path) if src else
            said("prefill.lengths_given", lengths=[f"{x:,}" for x in sorted(set(lengths))])
            if lengths else "")
    if not extend:
        return base
    ext = (said("prefill.lengths_past", n=len(lengths), tokens=f"{default_len:,}") if lengths
           else said("prefill.lengths_workload", tokens=f"{default_len:,}"))
    return said("prefill.lengths", base=base, ext=ext)


def _accounting_note(rows: list[dict], exact: bool, why: Said | str, how_long: Said | str,
                     guessed: bool) -> Said:
    """How the tokens were accounted, in words (``why``: what the exact note adds about
    #new-seq, or why the accounting is approximate)."""
    split = said("prefill.guessed") if guessed else ""
    if exact:
        return said("prefill.note_exact", why=why, lengths=how_long, guessed=split)
    tail = (said("prefill.approx_counts") if _counts_in_progress(rows) else
            said("prefill.approx_zero", zero=0))
    return said("prefill.note_approx", why=why, lengths=how_long or said("prefill.no_lengths"),
                tail=tail, guessed=split)


def _intervals(rows: list[dict], decodes: list[dict], remaining: list[int]) -> list[str]:
    """What the interval before each Prefill line holds (PREFILL, FIRST, DECODE or IDLE),
    from the line before it in the window and the prompt work that line left."""
    merged = sorted([(_order(r), "p", i) for i, r in enumerate(rows)]
                    + [(_order(r), "d", -1) for r in decodes])
    before: dict[int, tuple[str, int] | None] = {}
    prev = None
    for _, kind, i in merged:
        if kind == "p":
            before[i] = prev
        prev = (kind, i)
    out = []
    for i in range(len(rows)):
        p = before[i]
        if p is None:
            out.append(FIRST)
        elif p[0] == "d":
            out.append(DECODE)
        else:
            j = p[1]
            out.append(PREFILL if remaining[j] > 0 or _queued(rows[j]) else IDLE)
    return out


def _batch(r: dict, shares: tuple[Share, ...], interval: str, budget: int,
           exact: bool) -> Batch:
    """One Prefill line as a batch."""
    n = _int(r, "new_token", 0) or 0
    return Batch(line=int(r["line"]), file=str(r.get("file", "")),
                 sha256=str(r.get("sha256", "")), tps=_tps(r), new_token=n,
                 new_seq=_int(r, "new_seq", 0) or 0,
                 cached_token=_int(r, "cached_token", 0) or 0,
                 shares=shares, partial=n < budget, interval=interval,
                 budget=budget, exact=exact)


def _started_lengths(batches: list[Batch], lengths: list[int],
                     default_len: int | None) -> dict[int, int]:
    """The prompt length of each request that starts in ``batches``."""
    lens = {}
    for b in batches:
        for s in b.shares:
            if s.starts:
                lens[s.request] = (lengths[s.request - 1] if s.request <= len(lengths)
                                   else default_len)
    return lens


def sequences_of(acc: Accounting) -> list[Chunks]:
    """Per request, its batches, the batch where the next one begins and the next one's
    first clean chunk."""
    by_req: dict[int, list[Batch]] = {}
    for b in acc.batches:
        for s in b.shares:
            by_req.setdefault(s.request, []).append(b)
    out = []
    for k in sorted(by_req):
        nxt = by_req.get(k + 1, [])
        start = next((b for b in nxt if (s := b.share(k + 1)) is not None and s.starts),
                     nxt[0] if nxt else None)
        out.append(Chunks(request=k, input_len=acc.lengths.get(k), batches=tuple(by_req[k]),
                          next_start=start, next_clean=next((b for b in nxt if b.clean), None),
                          exact=acc.exact))
    return out


def chunk_sequences(ing: Ingested, engine: str, workload: str,
                    lengths: list[int] | None = None, default_len: int | None = None,
                    budget: int | None = None) -> list[Chunks]:
    """Each request's prefill batches in the window (empty when the engine logs none, or
    none with a throughput)."""
    acc = window_accounting(ing, engine, workload, lengths, default_len, budget)
    if acc is None or all(b.tps is None for b in acc.batches):
        return []
    return sequences_of(acc)


@dataclass(frozen=True)
class Interval:
    """One logged interval of prompt throughput: a stats interval (vLLM), or the time since
    the previous Prefill line, one batch (SGLang); with why the phase table leaves it out."""

    record: dict
    tps: float | None
    tokens: float | None        # prompt tokens it covers, where the log gives them
    seconds: float | None       # its length
    why: tuple[Said, ...]       # empty: kept

    @property
    def line(self) -> int:
        return int(self.record["line"])


# The one rule of the phase table, for every engine: a logged interval is left out when it
# is partial, when its time may include decode or idle time, or when a runtime event ran in
# it. Intervals holding several requests' prompts count: the value is total throughput.
PHASE_RULE = said("prefill.phase_rule")


def _seconds(a: str | None, b: str | None) -> float | None:
    from datetime import datetime

    if not a or not b:
        return None
    return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()


def _events(ing: Ingested, engine: str, workload: str) -> list[str]:
    return sorted(r["ts"] for k in EVENTS for r in ing.in_window(k, engine, workload)
                  if r.get("ts"))


def _event_in(events: list[str], after: str | None, until: str | None) -> bool:
    return bool(until) and any((after or "") < t <= until for t in events)


def _stats_intervals(stats: list[dict], events: list[str]) -> list[Interval]:
    """Each stats interval with prompt throughput; the phase's first and last are partial."""
    busy = [i for i, r in enumerate(stats) if float(r["prompt_tps"]) > 0]
    out = []
    for i in busy:
        r, prev = stats[i], stats[i - 1] if i else None
        why = []
        if i in (busy[0], busy[-1]):
            why.append(said("prefill.partial_first" if i == busy[0] else "prefill.partial_last"))
        elif not (float(prev["prompt_tps"]) > 0 or (prev.get("waiting") or 0) > 0):
            why.append(said("prefill.stats_idle"))
        if _event_in(events, prev["ts"] if prev else None, r.get("ts")):
            why.append(said("prefill.event"))
        sec = _seconds(prev.get("ts") if prev else None, r.get("ts"))
        out.append(Interval(r, float(r["prompt_tps"]),
                            float(r["prompt_tps"]) * sec if sec else None, sec, tuple(why)))
    return out


def _batch_intervals(rows: list[dict], acc: Accounting, events: list[str]) -> list[Interval]:
    """Each Prefill line as the interval since the line before it (one batch)."""
    by_line = {(b.file, b.line): b for b in acc.batches}
    out, prev_ts = [], None
    for r in rows:
        b = by_line[(str(r.get("file", "")), int(r["line"]))]
        why = []
        if b.partial:
            why.append(said("prefill.partial_batch", tokens=f"{b.new_token:,}",
                            budget=f"{b.budget:,}"))
        if not b.prefill_only:
            why.append(said("prefill.batch_decode" if b.interval == DECODE
                            else "prefill.batch_idle"))
        if _event_in(events, prev_ts, r.get("ts")):
            why.append(said("prefill.event"))
        if b.tps is None:
            why.append(said("prefill.no_tps"))
        out.append(Interval(r, b.tps, float(b.new_token),
                            b.new_token / b.tps if b.tps else None, tuple(why)))
        prev_ts = r.get("ts")
    return out


def phase_intervals(ing: Ingested, engine: str, workload: str,
                    accounting: Accounting | None = None) -> list[Interval]:
    """Every logged interval of prompt throughput in the window, with why the phase table
    leaves it out (``PHASE_RULE``, the same for every engine)."""
    events = _events(ing, engine, workload)
    stats = sorted(ing.in_window("engine_stats", engine, workload), key=lambda r: r["line"])
    if stats:
        return _stats_intervals(stats, events)
    acc = accounting or window_accounting(ing, engine, workload)
    if acc is None:
        return []
    rows = sorted(ing.in_window("prefill_batch", engine, workload), key=_order)
    return _batch_intervals(rows, acc, events)


def phase_values(ing: Ingested, engine: str, workload: str,
                 accounting: Accounting | None = None) -> tuple[list[float], list[dict]]:
    """Prefill throughput of the intervals the phase table keeps (``PHASE_RULE``), and their
    records."""
    kept = [iv for iv in phase_intervals(ing, engine, workload, accounting) if not iv.why]
    return [float(iv.tps) for iv in kept], [iv.record for iv in kept]


# --- figures ----------------------------------------------------------------------------

def _lines(xs) -> Said:
    xs = list(xs)
    return said("prefill.line_one" if len(xs) == 1 else "prefill.lines", lines=xs)


def _why_lines(intervals: list[Interval]) -> Said:
    """Each interval's line and why it is left out, one after the other."""
    return joined([said("prefill.line_paren", line=iv.line, why=list(iv.why))
                   for iv in intervals])


def prefill_figures(run: Run, ing: Ingested) -> tuple[list[Figure], dict]:
    figures: list[Figure] = []
    sequences: dict[tuple[str, str], list[Chunks]] = {}
    all_values: list[tuple[float, Source, Said]] = []
    for w in run.meta.workloads:
        for e in run.meta.engines:
            if not ing.has_benchmark(e.id, w.id):
                continue
            we, ctx = (w.id, e.id), {"engine": e.id, "workload": w.id}
            acc = window_accounting(ing, e.id, w.id, default_len=w.input_tokens)
            intervals = phase_intervals(ing, e.id, w.id, acc)
            kept = [iv for iv in intervals if not iv.why]
            if not kept:
                figures.append(_no_phase(we, ctx, intervals))
                continue
            recs = [iv.record for iv in kept]
            src = (Source(path=recs[0]["file"], sha256=recs[0]["sha256"],
                          lines=tuple(int(r["line"]) for r in recs)),)
            all_values += [(float(iv.tps), Source(path=iv.record["file"],
                                                  sha256=iv.record["sha256"],
                                                  lines=(iv.line,)),
                            said("prefill.where", engine=e.id, workload=w.id, line=iv.line))
                           for iv in kept]
            figures += _phase_figures(we, ctx, intervals, src)
            seqs = sequences_of(acc) if acc is not None and any(
                b.tps is not None for b in acc.batches) else []
            sequences[(e.id, w.id)] = seqs
            if not seqs:
                figures.append(figure(id=ids.prefill(*we, "chunks"), value="not logged per chunk",
                                      unit="verdict", context=ctx, sources=src,
                                      method=said("prefill.not_per_chunk")))
                continue
            figures += _batch_figures(we, ctx, acc, seqs)
            figures += _chunk_figures(we, ctx, acc, seqs)
    if all_values:
        lo = min(all_values, key=lambda x: x[0])
        hi = max(all_values, key=lambda x: x[0])
        which = said("prefill.which", rule=PHASE_RULE)
        figures += [
            figure(id=ids.prefill_range("min"), value=lo[0], unit="tok/s", decimals=0,
                   sources=(lo[1],), method=said("prefill.range_min", which=which, where=lo[2])),
            figure(id=ids.prefill_range("max"), value=hi[0], unit="tok/s", decimals=0,
                   sources=(hi[1],), method=said("prefill.range_max", which=which, where=hi[2]))]
    return figures, sequences


def _lines_of(intervals: list[Interval]) -> tuple[Source, ...]:
    """The log lines of ``intervals``, per file."""
    files: dict[tuple[str, str], list[int]] = {}
    for iv in intervals:
        files.setdefault((iv.record["file"], iv.record["sha256"]), []).append(iv.line)
    return tuple(Source(path=f, sha256=h, lines=tuple(ls)) for (f, h), ls in files.items())


def _no_phase(we: tuple[str, str], ctx, intervals: list[Interval]) -> Figure:
    """No interval kept: every one the log has is left out by the rule, or there is none."""
    if not intervals:
        return figure(id=ids.prefill(*we, "phase"), value=NO_LOG, unit="verdict", context=ctx,
                      method=said("prefill.no_records"))
    return figure(id=ids.prefill(*we, "phase"), value=NONE, unit="verdict", context=ctx,
                  sources=_lines_of(intervals),
                  method=said("prefill.all_left_out", why=_why_lines(intervals),
                              rule=PHASE_RULE))


def _phase_mean(kept: list[Interval], stats: bool) -> tuple[float, Said]:
    """Tokens over time of the intervals kept, and how."""
    values = [float(iv.tps) for iv in kept]
    if stats:       # fixed-time intervals: the plain mean is tokens over time
        return statistics.fmean(values), said("prefill.mean_equal")
    tokens = [float(iv.tokens or 0) for iv in kept]     # each line covers its own tokens
    return (sum(tokens) / sum(n / v for n, v in zip(tokens, values, strict=True)),
            said("prefill.mean_harmonic"))


def _phase_figures(we: tuple[str, str], ctx, intervals: list[Interval],
                   src: tuple[Source, ...]) -> list[Figure]:
    """The phase table's row: how many logged intervals it keeps and leaves out (which, and
    why), their mean length, the mean as tokens over time, and min and max when it keeps
    more than one (a single interval is its one value)."""
    kept = [iv for iv in intervals if not iv.why]
    left = [iv for iv in intervals if iv.why]
    values = [float(iv.tps) for iv in kept]
    stats = kept[0].record["kind"] == "engine_stats"
    basis = said("prefill.basis_stats" if stats else "prefill.basis_batches")
    left_how = _why_lines(left) if left else said("prefill.none")
    secs = [iv.seconds for iv in kept if iv.seconds]
    mean, how_mean = _phase_mean(kept, stats)
    rule = said("prefill.rule", basis=basis, rule=PHASE_RULE)
    out = [figure(id=ids.prefill(*we, "intervals"), value=len(kept), unit="count", decimals=0,
                  sources=src, context=ctx,
                  method=said("prefill.intervals", n=len(intervals), rule=rule)),
           figure(id=ids.prefill(*we, "left_out"), value=len(left), unit="count", decimals=0,
                  sources=_lines_of(left) or src,
                  context={**ctx, "lines": [iv.line for iv in left]},
                  method=said("prefill.left_out", n=len(intervals), how=left_how,
                              rule=PHASE_RULE)),
           figure(id=ids.prefill(*we, "mean"), value=mean, unit="tok/s", decimals=0,
                  sources=src, context={**ctx, "n": len(kept)},
                  method=(said("prefill.mean", how=how_mean, n=len(kept), rule=rule)
                          if len(kept) > 1 else said("prefill.mean_one", rule=rule)))]
    if secs:
        out.append(figure(id=ids.prefill(*we, "interval_s"), value=statistics.fmean(secs),
                          unit="s", decimals=1, sources=src, context=ctx,
                          method=said("prefill.interval_stats" if stats
                                      else "prefill.interval_batches")))
    if len(kept) > 1:
        out += [figure(id=ids.prefill(*we, name), value=fn(values), unit="tok/s", decimals=0,
                       sources=src, context=ctx,
                       method=said("prefill.extreme", stat=statistic(name), n=len(kept),
                                   rule=rule))
                for name, fn in (("min", min), ("max", max))]
    return out


def _sources(acc: Accounting, batches) -> tuple[Source, ...]:
    """The log lines of ``batches`` (per file) and the prompt lengths' result file."""
    files: dict[tuple[str, str], list[int]] = {}
    for b in batches:
        files.setdefault((b.file, b.sha256), []).append(b.line)
    src = tuple(Source(path=f, sha256=h, lines=tuple(ls)) for (f, h), ls in files.items())
    return src + ((acc.length_source,) if acc.length_source else ())


def _batch_figures(we: tuple[str, str], ctx, acc: Accounting, seqs: list[Chunks]) -> list[Figure]:
    mixed = [b for b in acc.batches if b.mixed]
    excluded = [b for b in acc.batches if not b.clean]
    few = [c.request for c in seqs if len(c.clean) < 2]
    mixed_how = (joined([said("prefill.line_colon", line=b.line, what=b.split_said())
                         for b in mixed]) if mixed else said("prefill.none"))
    excl_how = (joined([said("prefill.line_colon", line=b.line, what=b.reasons_said())
                        for b in excluded]) if excluded else said("prefill.none"))
    unknown = "" if acc.exact else said("prefill.unknown_mixed")
    few_how = said("prefill.few", requests=[str(k) for k in few]) if few else ""
    return [
        figure(id=ids.prefill(*we, "mixed_batches"), value=len(mixed), unit="count", decimals=0,
               sources=_sources(acc, acc.batches), context=ctx,
               method=said("prefill.mixed_batches", n=len(acc.batches), unknown=unknown,
                           how=mixed_how, note=capital(acc.note))),
        figure(id=ids.prefill(*we, "excluded_batches"), value=len(excluded), unit="count",
               decimals=0,
               sources=_sources(acc, acc.batches), context=ctx,
               method=said("prefill.excluded_batches", n=len(acc.batches),
                           budget=f"{acc.budget:,}", how=excl_how, few=few_how,
                           note=capital(acc.note))),
    ]


def _chunk_figures(we: tuple[str, str], ctx, acc: Accounting, seqs: list[Chunks]) -> list[Figure]:
    out = []
    for c in seqs:
        clean = c.clean
        if len(clean) < 2:
            continue
        src = _sources(acc, c.clean)
        rid = partial(ids.prefill_request, *we, c.request)
        seq = " → ".join(f"{v:,.0f}" for v in c.tps)
        length = said("prefill.prompt", tokens=f"{c.input_len:,}") if c.input_len else ""
        left = said("prefill.left", items=joined(
            [said("prefill.line_paren", line=b.line, why=b.reasons_said())
             for b in c.excluded])) if c.excluded else ""
        first = (said("prefill.first_line") if any(b.interval == FIRST for b in clean) else "")
        note = said("prefill.note", note=capital(acc.note))
        out += [
            figure(id=rid("sequence"), value=seq, unit="tok/s", sources=src, context=ctx,
                   method=said("prefill.sequence", request=c.request, budget=f"{acc.budget:,}",
                               lines=_lines(c.lines), cached=[f"{x:,}" for x in c.cached],
                               length=length, left=left, first=first, note=note)),
            figure(id=rid("decay"), value=c.tps[0] / c.tps[-1], unit="x", decimals=2,
                   sources=src, context=ctx,
                   method=said("prefill.decay", first_tps=f"{c.tps[0]:,.0f}",
                               first_cached=f"{c.cached[0]:,}", last_tps=f"{c.tps[-1]:,.0f}",
                               last_cached=f"{c.cached[-1]:,}", request=c.request, left=left,
                               first=first, note=note)),
            figure(id=rid("decay_pct"), value=100 * (1 - c.tps[-1] / c.tps[0]), unit="%",
                   decimals=1, sources=src, context=ctx,
                   method=said("prefill.decay_pct", hundred=100, one=1, request=c.request,
                               first_cached=f"{c.cached[0]:,}", last_cached=f"{c.cached[-1]:,}",
                               first=first, note=note)),
        ]
        b = c.next_start
        if b is not None and b.tps is not None:
            kind = (said("prefill.reason_mixed", split=b.split_said()) if b.mixed else
                    said("prefill.kind_pure", split=b.split_said()) if b.exact else
                    said("prefill.kind_unknown", tokens=f"{b.new_token:,}"))
            extra = [x for x in b.reasons_said() if x.key != "prefill.reason_mixed"]
            tail = (said("prefill.not_clean", reasons=extra) if extra else
                    "" if b.mixed else said("prefill.clean"))
            out.append(figure(
                id=rid("recovery"), value=b.tps, unit="tok/s", decimals=0,
                sources=_sources(acc, (b,)),
                context={**ctx, "batch": MIXED if b.mixed else PURE if b.exact
                         else UNKNOWN_BATCH},
                method=said("prefill.recovery", request=c.request + 1, line=b.line, kind=kind,
                            tail=tail, note=note)))
        n = c.next_clean
        if n is not None:
            s = n.share(c.request + 1)
            out.append(figure(
                id=rid("recovery_clean"), value=n.tps, unit="tok/s", decimals=0,
                sources=_sources(acc, (n,)), context=ctx,
                method=said("prefill.recovery_clean", request=c.request + 1, line=n.line,
                            cached=f"{s.cached if s else 0:,}", note=note)))
    return out


CHUNK_COLUMNS = ["engine", "workload", "request", "line", "cached", "tokens", "tps", "clean",
                 "why_not", "shared"]


def chunk_rows(sequences: dict[tuple[str, str], list[Chunks]]) -> list[dict]:
    """One row per batch of each request: the request's context before it, its tokens and
    throughput, and whether it is a clean chunk (else why not). The chunk chart draws these."""
    rows = []
    for (engine, workload), seqs in sorted(sequences.items()):
        for c in seqs:
            for b in c.batches:
                share = b.share(c.request)
                rows.append({"engine": engine, "workload": workload, "request": c.request,
                             "line": b.line, "cached": c.cached_before(b),
                             "tokens": (share.tokens if share.known else None) if share
                             else b.new_token,
                             "tps": b.tps, "clean": b.clean,
                             "why_not": "; ".join(b.reasons()),
                             # the batch carries other requests' tokens too: its throughput
                             # is the batch's, not this request's chunk's
                             "shared": b.mixed})
    return rows
