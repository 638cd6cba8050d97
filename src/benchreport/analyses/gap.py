"""Where an end-to-end gap accrues: before the last request's first token, or after it.

When every request is sent at the start (no more prompts than the concurrency), a run's
duration splits into three parts, from the per-request TTFTs and the duration:

- to the first first token: min TTFT, prefill only;
- overlap: from the first first token to the last one (max TTFT − min TTFT), in which
  prefill and decode share the engine;
- decode tail: from the last first token to the end (duration − max TTFT), decode only.

Between two engines, the duration gap is the difference of the time to the last first
token plus the difference of the decode tails. Which share dominates selects the sentence
that explains the gap (``WHERE``); no explanation is fixed text.
"""

from __future__ import annotations

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.methods import said
from ..core.metrics import Comparison
from ..core.records import PointResult
from ..core.verdicts import (  # noqa: F401 (re-exported)
    BOTH,
    DECODE,
    FIRST_TOKENS,
    INCONSISTENT,
    UNKNOWN,
)

# A share of the gap at or above this is "most of it".
MOST = 2 / 3


def _src(entry: PointResult, key: str) -> tuple[Source, ...]:
    return (Source(path=entry.file.rel, sha256=entry.file.sha256, key=key,
                   lines=(entry.line,)),)


def where(first_share: float) -> str:
    """Which part of a gap dominates, from the share that accrued before the last first
    token.

    >>> where(0.9), where(0.44), where(-0.03)
    ('first tokens', 'both', 'decode')
    """
    if first_share >= MOST:
        return FIRST_TOKENS
    if 1 - first_share >= MOST:
        return DECODE
    return BOTH


def split_figures(workload, entries: list[PointResult],
                  comparison: Comparison | None,
                  inconsistent: dict[str, str] | None = None) -> list[Figure]:
    """Per engine: the three parts of the duration; per pair: how the gap splits.

    ``inconsistent`` maps an engine whose duration disagrees with its log to that check's
    figure id: where the gap accrued is then not said (verdict INCONSISTENT)."""
    out: list[Figure] = []
    wid = workload.id
    parts: dict[str, tuple[float, float]] = {}
    if not entries:
        return []
    sent_at_start = (workload.num_prompts is not None and workload.concurrency is not None
                     and workload.num_prompts <= workload.concurrency)
    for entry in entries:
        ttfts = entry.seconds("ttft_ms")           # the requests that succeeded
        if not ttfts or not sent_at_start:
            continue
        e, dur = entry.engine, entry.duration
        ctx = {"engine": e, "workload": wid}
        first, last = min(ttfts), max(ttfts)
        parts[e] = (last, dur - last)
        dep = (ids.e2e(wid, e, "duration"),)
        out += [
            figure(id=ids.e2e(wid, e, "to_first_token_s"), value=first, unit="s", decimals=1,
                   sources=_src(entry, "ttfts"), context=ctx,
                   method=said("gap.to_first_token")),
            figure(id=ids.e2e(wid, e, "to_last_first_token_s"), value=last, unit="s", decimals=1,
                   sources=_src(entry, "ttfts"), context=ctx,
                   method=said("gap.to_last_first_token")),
            figure(id=ids.e2e(wid, e, "overlap_s"), value=last - first, unit="s", decimals=1,
                   sources=_src(entry, "ttfts"), context=ctx,
                   method=said("gap.overlap")),
            figure(id=ids.e2e(wid, e, "decode_tail_s"), value=dur - last, unit="s", decimals=1,
                   sources=_src(entry, "duration, ttfts"), context=ctx,
                   depends_on=(*dep, ids.e2e(wid, e, "to_last_first_token_s")),
                   method=said("gap.decode_tail")),
        ]
    ctx = {"workload": wid}
    if comparison is None:
        return out
    fast, slow = comparison.ranking[0], comparison.slower
    if fast not in parts or slow not in parts:
        reason = said("gap.not_at_start" if not sent_at_start else "gap.no_ttfts")
        out.append(figure(id=ids.e2e(wid, None, "gap.where"), value=UNKNOWN, unit="verdict",
                          context=ctx, method=said("gap.where_unknown", reason=reason)))
        return out
    doubtful = [e for e in (fast, slow) if e in (inconsistent or {})]
    if doubtful:
        out.append(figure(id=ids.e2e(wid, None, "gap.where"), value=INCONSISTENT,
                          unit="verdict", context={**ctx, "engine": doubtful[0]},
                          depends_on=tuple(inconsistent[e] for e in doubtful),
                          method=said("gap.where_inconsistent", engines=doubtful)))
        return out
    gap = sum(parts[slow]) - sum(parts[fast])
    d_first = parts[slow][0] - parts[fast][0]
    d_tail = parts[slow][1] - parts[fast][1]
    parts_of = {e: (ids.e2e(wid, e, "to_last_first_token_s"), ids.e2e(wid, e, "decode_tail_s"))
           for e in (fast, slow)}
    if gap <= 0:
        return out
    share = d_first / gap
    out += [
        figure(id=ids.e2e(wid, None, "gap_s"), value=gap, unit="s", decimals=1, context=ctx,
               depends_on=(ids.e2e(wid, slow, "duration"), ids.e2e(wid, fast, "duration")),
               method=said("gap.gap")),
        figure(id=ids.e2e(wid, None, "gap.first_tokens_s"), value=d_first, unit="s", decimals=1,
               context=ctx, depends_on=(parts_of[slow][0], parts_of[fast][0]),
               method=said("gap.first_tokens")),
        figure(id=ids.e2e(wid, None, "gap.decode_tail_s"), value=d_tail, unit="s", decimals=1,
               context=ctx, depends_on=(parts_of[slow][1], parts_of[fast][1]),
               method=said("gap.decode_tail_diff")),
        figure(id=ids.e2e(wid, None, "gap.first_tokens_share"), value=100 * share, unit="%",
               decimals=0, context=ctx,
               depends_on=(ids.e2e(wid, None, "gap.first_tokens_s"), ids.e2e(wid, None, "gap_s")),
               method=said("gap.first_tokens_share")),
        figure(id=ids.e2e(wid, None, "gap.decode_share"), value=100 * (1 - share), unit="%",
               decimals=0, context=ctx,
               depends_on=(ids.e2e(wid, None, "gap.decode_tail_s"), ids.e2e(wid, None, "gap_s")),
               method=said("gap.decode_share")),
        *([figure(id=ids.e2e(wid, None, "gap.first_tokens_lead_s"), value=-d_first, unit="s",
                  decimals=1, context=ctx, depends_on=(ids.e2e(wid, None, "gap.first_tokens_s"),),
                  method=said("gap.first_tokens_lead"))]
          if d_first < 0 else []),
        figure(id=ids.e2e(wid, None, "gap.where"), value=where(share), unit="verdict", context=ctx,
               depends_on=(ids.e2e(wid, None, "gap.first_tokens_share"),),
               method=said("gap.where", most=f"{MOST:.0%}")),
    ]
    return out
