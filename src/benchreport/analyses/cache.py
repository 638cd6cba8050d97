"""The prefix cache and the KV cache, as each engine's log reports them in a benchmark window.

The two engines do not report the same quantity, so each figure says which it is:

- SGLang's ``Prefill batch`` lines give, per admitted batch, the prompt tokens found in the
  prefix cache (``#cached-token``) and those computed (``#new-token``): the window's hit rate
  is cached ÷ (cached + computed) over its lines, exact for the window.
- vLLM's ``Engine 000`` line prints ``Prefix cache hit rate`` as a rolling rate over its
  most recent ~1000 requests, not per interval: the figure is the rate on the window's last
  stats line, and it includes every request before the window that is still in that span.

KV-cache usage is the highest share the window's lines print (vLLM ``GPU KV cache usage``,
SGLang ``full token usage`` for a hybrid sliding-window model, else ``token usage``).
"""

from __future__ import annotations

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.methods import said
from ..core.records import Ingested, Run

WINDOW, ROLLING = "window", "rolling"


def source_of(recs: list[dict]) -> tuple[Source, ...]:
    return (Source(path=recs[0]["file"], sha256=recs[0]["sha256"],
                   lines=tuple(int(r["line"]) for r in recs)),)


def num(r: dict, key: str) -> float | None:
    value = r.get(key)
    return None if value in (None, "") else float(value)


def _sglang_hits(fid, ctx: dict, recs: list[dict], name: str) -> list[Figure]:
    rows = [r for r in recs if num(r, "new_token") is not None]
    cached = sum(int(num(r, "cached_token") or 0) for r in rows)
    computed = sum(int(num(r, "new_token") or 0) for r in rows)
    if not rows or cached + computed == 0:
        return []
    return [figure(id=fid(name), value=100 * cached / (cached + computed),
                   unit="%", decimals=1, sources=source_of(rows),
                   context={**ctx, "basis": WINDOW, "cached": cached, "computed": computed},
                   method=said("cache.sglang_hits", hundred=100))]


def _vllm_hits(fid, ctx: dict, recs: list[dict], name: str) -> list[Figure]:
    rows = [r for r in recs if num(r, "prefix_cache_hit_rate_pct") is not None]
    if not rows:
        return []
    last = max(rows, key=lambda r: int(r["line"]))
    return [figure(id=fid(name), value=num(last, "prefix_cache_hit_rate_pct"),
                   unit="%", decimals=1, sources=source_of([last]),
                   context={**ctx, "basis": ROLLING},
                   method=said("cache.vllm_hits", n=1000))]


def prefix_hits(fid, ctx: dict, stats: list[dict], fills: list[dict],
                name: str = "prefix_hit_pct") -> list[Figure]:
    """The window's prefix-cache hit rate from SGLang's Prefill lines, else vLLM's rolling
    rate on its last stats line (each figure says its ``basis``)."""
    return _sglang_hits(fid, ctx, fills, name) or _vllm_hits(fid, ctx, stats, name)


def _printed_pct_decimals(rows: list[dict], key: str) -> int:
    """Decimals a fraction's percentage can honestly show: SGLang prints token usage to two
    decimals (0.03), so 3%, not 3.0%; a log that prints more digits keeps them.

    >>> _printed_pct_decimals([{"u": 0.03}, {"u": 0.1}], "u")
    0
    >>> _printed_pct_decimals([{"u": 0.0312}], "u")
    2
    """
    digits = max(len(repr(float(num(r, key))).partition(".")[2].rstrip("0")) for r in rows)
    return max(digits, 2) - 2


def _usage(fid, ctx: dict, recs: list[dict], key: str, label: str) -> list[Figure]:
    rows = [r for r in recs if num(r, key) is not None]
    if not rows:
        return []
    top = max(rows, key=lambda r: (num(r, key), -int(r["line"])))
    pct = key.endswith("_pct")
    return [figure(id=fid("kv_usage_peak_pct"), value=(1 if pct else 100) * num(top, key),
                   unit="%", decimals=1 if pct else _printed_pct_decimals(rows, key),
                   sources=source_of([top]), context=ctx,
                   method=said("cache.usage_peak", label=label))]


def cache_figures(run: Run, ing: Ingested) -> list[Figure]:
    """Prefix-cache hit rate and peak KV-cache usage per engine and workload window."""
    out: list[Figure] = []
    for w in run.meta.workloads:
        for e in run.meta.engines:
            ctx = {"engine": e.id, "workload": w.id}

            def fid(name: str, w=w, e=e) -> str:
                return ids.cache(w.id, e.id, name)

            stats = ing.in_window("engine_stats", e.id, w.id)
            fills = ing.in_window("prefill_batch", e.id, w.id)
            decodes = ing.in_window("decode_batch", e.id, w.id)
            out += prefix_hits(fid, ctx, stats, fills)
            out += (_usage(fid, ctx, stats, "kv_cache_usage_pct", "GPU KV cache usage")
                    or _usage(fid, ctx, fills + decodes, "full_token_usage", "full token usage")
                    or _usage(fid, ctx, fills + decodes, "token_usage", "token usage"))
    return out
