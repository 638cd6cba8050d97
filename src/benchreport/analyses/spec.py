"""Speculative decoding: drafted and accepted tokens, mean accepted length, per position.

Definitions differ: vLLM's "Mean acceptance length" is 1 + accepted ÷ draft rounds (the
bonus token included); SGLang's "accept len" is tokens emitted per verify step, the bonus
token included too; so 1.00 means no draft token was accepted, in both. A random dataset
says little about acceptance on real traffic: its text is not predictable.
"""

from __future__ import annotations

import json
import statistics
from functools import partial

from ..core import ids
from ..core.figures import Figure, Source, figure, listing
from ..core.methods import said
from ..core.records import Ingested, Run


def _src(recs: list[dict]) -> tuple[Source, ...]:
    return (Source(path=recs[0]["file"], sha256=recs[0]["sha256"],
                   lines=tuple(int(r["line"]) for r in recs)),)


def spec_figures(run: Run, ing: Ingested) -> list[Figure]:
    figures: list[Figure] = []
    for w in run.meta.workloads:
        for e in run.meta.engines:
            if not ing.has_benchmark(e.id, w.id):
                continue
            we, ctx = (w.id, e.id), {"engine": e.id, "workload": w.id}
            fid = partial(ids.spec, *we)
            vllm = [r for r in ing.in_window("spec_decode", e.id, w.id)
                    if r.get("drafted") not in (None, "")]
            sglang = [r for r in ing.in_window("decode_batch", e.id, w.id)
                      if r.get("accept_len") not in (None, "")]
            if vllm:
                figures += _from_vllm(we, ctx, sorted(vllm, key=lambda r: r["line"]))
            elif sglang:
                figures += _from_sglang(we, ctx, sorted(sglang, key=lambda r: r["line"]),
                                        draft_tokens(ing, e.id))
            else:
                figures.append(figure(id=fid("verdict"), value="not logged", unit="verdict",
                                      context=ctx, method=said("spec.none")))
    return figures


def _from_vllm(we: tuple[str, str], ctx: dict, recs: list[dict]) -> list[Figure]:
    fid = partial(ids.spec, *we)
    src = _src(recs)
    accepted = sum(int(r["accepted"]) for r in recs)
    drafted = sum(int(r["drafted"]) for r in recs)
    per_pos_rows = [list(r.get("per_position_acceptance") or []) for r in recs]
    k = max((len(p) for p in per_pos_rows), default=0)
    out = [
        figure(id=fid("drafted"), value=drafted, unit="tokens", decimals=0, sources=src,
               context=ctx, method=said("spec.drafted")),
        figure(id=fid("accepted"), value=accepted, unit="tokens", decimals=0, sources=src,
               context=ctx, method=said("spec.accepted")),
        figure(id=fid("acceptance_pct"), value=100 * accepted / drafted if drafted else 0.0,
               unit="%", decimals=1, sources=src, context=ctx,
               method=said("spec.acceptance", hundred=100)),
    ]
    if k and drafted:
        rounds = [int(r["drafted"]) / k for r in recs]
        out.append(figure(id=fid("accept_len"), value=1 + accepted / sum(rounds),
                          unit="tokens/step", decimals=2, sources=src, context=ctx,
                          method=said("spec.accept_len", one=1, k=k)))
        per_pos = per_position(recs, k)
        out.append(figure(id=fid("per_position"), value=listing(f"{x:.3f}" for x in per_pos),
                          unit="fraction", sources=src, context=ctx,
                          method=said("spec.per_position")))
    return out


def per_position(recs: list[dict], k: int) -> list[float]:
    """vLLM's per-position acceptance over several SpecDecoding lines, each line weighted
    by its draft rounds (Drafted ÷ ``k`` positions)."""
    rounds = [int(r["drafted"]) / k for r in recs]
    rows = [list(r.get("per_position_acceptance") or []) for r in recs]
    return [sum(p[i] * n for p, n in zip(rows, rounds, strict=True) if i < len(p))
            / sum(rounds) for i in range(k)]


def speculative_config(flags: dict) -> dict | None:
    """vLLM's --speculative-config as a mapping (it is launched as JSON text), else None."""
    spec = flags.get("speculative_config")
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except (ValueError, RecursionError):      # not JSON, or nested past any config
            return None
    return spec if isinstance(spec, dict) else None


def draft_tokens(ing: Ingested, engine: str) -> tuple[int, dict] | None:
    """Draft tokens per verify step as launched, and the record that says so: vLLM's
    speculative_config num_speculative_tokens; SGLang's speculative_num_draft_tokens counts
    the verified token too, so drafts are one fewer. The log's account before the launch
    file's (what ran, not what the script in the folder says now)."""
    recs = [r for k in ("server_args", "launch_config") for r in ing.records.get(k, [])
            if r["engine"] == engine]
    for rec in recs:
        flags = rec.get("flags") or rec.get("args") or {}
        spec = speculative_config(flags)
        if spec and spec.get("num_speculative_tokens"):
            return int(spec["num_speculative_tokens"]), rec
        if flags.get("speculative_num_draft_tokens"):
            return int(flags["speculative_num_draft_tokens"]) - 1, rec
    return None


def _from_sglang(we: tuple[str, str], ctx: dict, recs: list[dict],
                 drafts: tuple[int, dict] | None) -> list[Figure]:
    fid = partial(ids.spec, *we)
    src = _src(recs)
    mean_len = statistics.fmean(float(r["accept_len"]) for r in recs)
    out = [figure(id=fid("accept_len"), value=mean_len,
                  unit="tokens/step", decimals=2, sources=src, context=ctx,
                  method=said("spec.sglang_accept_len"))]
    rates = [float(r["accept_rate"]) for r in recs if r.get("accept_rate") not in (None, "")]
    if drafts and drafts[0] > 0:
        k, rec = drafts
        out.append(figure(
            id=fid("acceptance_pct"), value=100 * (mean_len - 1) / k, unit="%", decimals=1,
            sources=src + (Source(path=rec["file"], sha256=rec["sha256"],
                                  lines=(int(rec["line"]),)),),
            depends_on=(fid("accept_len"),), context=ctx,
            method=said("spec.sglang_acceptance", hundred=100, one=1, k=k)))
    elif rates:
        out.append(figure(id=fid("acceptance_pct"), value=100 * statistics.fmean(rates),
                          unit="%", decimals=1, sources=src, context=ctx,
                          method=said("spec.sglang_accept_rate", hundred=100,
                                      release="0.5.12+")))
    out.append(figure(id=fid("drafted"), value="not logged", unit="verdict", context=ctx,
                      sources=src,
                      method=said("spec.sglang_not_logged")))
    return out
