"""What each engine's log says about each benchmark point it could be placed in.

For every point whose window names it (``BenchWindow.point``: a window found by request
count, for example), from the log lines inside that window:

- ``point.<p>.log_gen_tps``: the server's total generation throughput. vLLM prints it per
  stats interval of equal time (the mean of the lines that generated tokens); SGLang per
  fixed number of decode steps (Σ tokens ÷ Σ time, each line's tokens ∝ running requests ×
  accepted length; a Decode line that follows a batch line with no running request is
  left out: SGLang times it from its previous Decode line, so its interval holds the idle
  time before the request). Both count every token the engine emitted, accepted drafts included,
  so they are comparable to the client's output throughput, not to its per-request rate;
- ``point.<p>.log_accept_len``: tokens per verify step, bonus token included (vLLM:
  1 + accepted ÷ draft rounds; SGLang: the mean of ``accept len``);
- ``point.<p>.log_prefix_hit_pct``: SGLang's prompt tokens found in the prefix cache over
  those admitted in the window; vLLM's rolling rate on the window's last stats line
  (over its most recent ~1000 requests, earlier points included), marked as such.

A point whose window holds no such line has no figure: it is not measured there.
"""

from __future__ import annotations

import bisect

from ..core import ids
from ..core.figures import Figure, figure, listing
from ..core.methods import said
from ..core.records import BenchWindow, Ingested, Run
from .cache import num as _num
from .cache import prefix_hits
from .cache import source_of as _src
from .decode import STEPS, TIME, time_weighted_mean
from .spec import per_position


def records_in(ing: Ingested, kind: str, w: BenchWindow) -> list[dict]:
    """The engine's records of ``kind`` inside window ``w``: by line when the window was
    placed by its lines (its last line belongs to it, unless the next window starts on it),
    else by time."""
    if w.file and w.first_line:
        nxt = any(x.engine == w.engine and x.file == w.file and x.first_line == w.last_line
                  for x in ing.windows + ing.point_windows if x is not w)
        end = w.last_line - 1 if nxt else w.last_line
        return sorted((r for r in ing.rows(kind, engine=w.engine, file=w.file)
                       if w.first_line <= int(r["line"]) <= end),
                      key=lambda r: int(r["line"]))
    return sorted(ing.rows(kind, engine=w.engine, window=(w.start, w.end)),
                  key=lambda r: (r["file"], int(r["line"])))


def idle_before(ing: Ingested, engine: str):
    """A test of whether an SGLang Decode record follows, in its file, a batch record with
    no running request (its interval then spans the engine's idle time)."""
    rows = sorted((r["file"], int(r["line"]), _num(r, "running_req"))
                  for k in ("prefill_batch", "decode_batch") for r in ing.records.get(k, [])
                  if r["engine"] == engine)
    keys = [(f, n) for f, n, _ in rows]

    def test(r: dict) -> bool:
        i = bisect.bisect_left(keys, (r["file"], int(r["line"])))
        return i > 0 and rows[i - 1][0] == r["file"] and rows[i - 1][2] == 0

    return test


def _gen(fid, ctx: dict, stats: list[dict], decodes: list[dict], idle) -> list[Figure]:
    vllm = [r for r in stats if (_num(r, "gen_tps") or 0) > 0]
    sglang = [r for r in decodes if (_num(r, "gen_tps") or 0) > 0 and not idle(r)]
    if vllm:
        value = time_weighted_mean([_num(r, "gen_tps") for r in vllm], basis=TIME)
        how = said("pointlog.gen_vllm")
        recs, basis = vllm, "stats_lines"
    elif sglang:
        weights = [(_num(r, "running_req") or 1) * (_num(r, "accept_len") or 1)
                   for r in sglang]
        value = time_weighted_mean([_num(r, "gen_tps") for r in sglang], weights, STEPS)
        how = said("pointlog.gen_sglang")
        recs, basis = sglang, "decode_lines"
    else:
        return []
    # which lines the mean is over: two engines' values on different bases do not compare
    return [figure(id=fid("log_gen_tps"), value=value, unit="tok/s", decimals=1,
                   sources=_src(recs), context={**ctx, "basis": basis}, method=how)]


def _accept(fid, ctx: dict, specs: list[dict], decodes: list[dict]) -> list[Figure]:
    vllm = [r for r in specs if _num(r, "drafted")]
    sglang = [r for r in decodes if _num(r, "accept_len") is not None]
    if vllm:
        k = max(len(r.get("per_position_acceptance") or []) for r in vllm)
        if not k:
            return []
        rounds = sum(_num(r, "drafted") / k for r in vllm)
        value = 1 + sum(_num(r, "accepted") or 0 for r in vllm) / rounds
        how = said("pointlog.accept_vllm", one=1, k=k)
        recs = vllm
    elif sglang:
        value = sum(_num(r, "accept_len") for r in sglang) / len(sglang)
        how = said("pointlog.accept_sglang")
        recs = sglang
    else:
        return []
    return [figure(id=fid("log_accept_len"), value=value, unit="tokens/step", decimals=2,
                   sources=_src(recs), context=ctx,
                   method=said("pointlog.accept", how=how))]


def run_spec_figures(ing: Ingested, windows: list[BenchWindow]) -> list[Figure]:
    """Per engine, over the log lines of every placed point window: the accepted length
    and, for vLLM, the acceptance at each draft position."""
    out: list[Figure] = []
    for engine in sorted({w.engine for w in windows}):
        mine = [w for w in windows if w.engine == engine]
        seen: dict[tuple, dict] = {}
        for kind in ("spec_decode", "decode_batch"):
            for w in mine:
                for r in records_in(ing, kind, w):
                    seen[(kind, r["file"], int(r["line"]))] = r
        specs = [r for (k, *_), r in sorted(seen.items()) if k == "spec_decode"]
        decodes = [r for (k, *_), r in sorted(seen.items()) if k == "decode_batch"]
        ctx = {"engine": engine, "windows": len(mine)}
        out += _accept(lambda name, e=engine: ids.spec_run(e, name), ctx, specs, decodes)
        drafted = [r for r in specs if _num(r, "drafted")]
        k = max((len(r.get("per_position_acceptance") or []) for r in drafted), default=0)
        if k:
            out.append(figure(id=ids.spec_run(engine, "per_position"),
                              value=listing(f"{x:.3f}" for x in per_position(drafted, k)),
                              unit="fraction", sources=_src(drafted), context=ctx,
                              method=said("pointlog.per_position")))
    return out


def _own(recs: list[dict], w: BenchWindow) -> list[dict]:
    """vLLM's interval lines of a window placed by its lines, without the first when others
    follow: it reports the interval before it, which began before the window's first
    request (the previous point's tail, or the warm-up)."""
    return recs[1:] if w.first_line and len(recs) > 1 else recs


def point_log_figures(run: Run, ing: Ingested) -> list[Figure]:
    """Generation throughput, accepted length and prefix-cache hits per placed point."""
    rows = {p["point"]: p for p in ing.points}
    idle = {e.id: idle_before(ing, e.id) for e in run.meta.engines}
    out: list[Figure] = []
    for w in ing.windows + ing.point_windows:
        if not w.point or w.point not in rows:
            continue
        p = rows[w.point]
        rate = p.get("request_rate_target")
        ctx = {"engine": w.engine, "workload": w.workload, "load": p.get("load"),
               "concurrency": p.get("max_concurrency_target"),
               "rate": None if rate is None or rate == float("inf") else rate,
               "point": w.point, "window": w.method or w.source}

        def fid(name: str, pid=w.point) -> str:
            return ids.point(pid, name)

        stats = _own(records_in(ing, "engine_stats", w), w)
        decodes = records_in(ing, "decode_batch", w)
        out += _gen(fid, ctx, stats, decodes, idle[w.engine])
        out += _accept(fid, ctx, _own(records_in(ing, "spec_decode", w), w), decodes)
        out += prefix_hits(fid, ctx, stats, records_in(ing, "prefill_batch", w),
                           "log_prefix_hit_pct")
    return out + run_spec_figures(ing, [w for w in ing.windows + ing.point_windows
                                        if w.point and w.point in rows])
