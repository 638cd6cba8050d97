"""SGLang prefill chunks: each request's tokens accounted through the Prefill batches.

A batch can hold the tail of one request and the head of the next (mixed); a small batch
runs slower from fixed overheads (partial); a line's throughput covers the time since the
previous Prefill line, which may include decode steps. Only pure, full batches with a
prefill-only interval make a request's chunk sequence. Checked against generated runs whose
batches are known, hand-made lines for what the generator never writes (prefix-cache hits,
#new-seq counting the in-progress request, lengths that do not fit), and the reference run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchreport.analyses.notebook import load_run
from benchreport.analyses.prefill import (
    DECODE,
    FIRST,
    IDLE,
    PREFILL,
    account,
    chunk_sequences,
    prefill_figures,
    window_accounting,
)
from benchreport.core.methods import english
from benchreport.ingest.io import load_run as load_synth_run
from benchreport.ingest.run import BenchWindow, Ingested, ingest_run, load_ingested, save_ingest
from benchreport.synth import make_run

from .conftest import ROOT, takes_seconds

SMALL = Path(__file__).parent / "fixtures" / "scenarios" / "small.yaml"


# --- generated runs: the simulation's batches are the truth -----------------------------

def _generated(tmp_path: Path, name: str, inputs: dict[str, int],
               gaps: dict[str, float] | None = None):
    """The small scenario's SGLang-like engine only, with other prompt lengths (not
    multiples of its 4,096-token budget) and, per workload in ``gaps``, requests arriving
    that many seconds apart."""
    doc = yaml.safe_load(SMALL.read_text())
    doc["engines"].pop("alpha")
    for wid, n in inputs.items():
        doc["workloads"][wid]["input_len"] = n
    for wid, gap in (gaps or {}).items():
        r = doc["engines"]["beta"]["runs"][wid]
        r["targets"], r["knob_value"] = {}, gap
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    sims = make_run(path, tmp_path / "data" / name)
    run = load_synth_run(name, tmp_path / "data", tmp_path / "report")
    return run, ingest_run(run), {s.spec.workload: s for s in sims}


def _truth(sim):
    """Per prefill step of the simulation: its segments (1-based request, tokens, context
    before, completes), and whether the time since the previous prefill step's end is
    prefill only (no decode step or idle time between)."""
    out, prev_end = [], None
    for step in sim.timeline.steps:
        if not step.prefill:
            continue
        segs = [(g.request + 1, g.tokens, g.cached, g.completes) for g in step.prefill]
        only = prev_end is None or abs(step.start - prev_end) < 1e-9
        out.append((segs, only))
        prev_end = step.end
    return out


@pytest.fixture(scope="module")
def back_to_back(tmp_path_factory):
    """All four requests arrive at once: 10,000 and 30,000-token prompts under a 4,096
    budget, so every request's tail shares a batch with the next one's head."""
    return _generated(tmp_path_factory.mktemp("b2b"), "b2b", {"8k": 10_000, "32k": 30_000})


def test_accounted_tokens_per_batch_equal_the_generators(back_to_back):
    run, ing, sims = back_to_back
    for wid, sim in sims.items():
        acc = window_accounting(ing, "beta", wid)
        truth = _truth(sim)
        assert acc.exact and len(acc.batches) == len(truth)
        for b, (segs, only) in zip(acc.batches, truth, strict=True):
            assert [(s.request, s.tokens, s.cached, s.completes) for s in b.shares] == segs
            assert b.mixed == (len(segs) > 1)
            assert b.prefill_only == only
        assert sum(b.mixed for b in acc.batches) == 3          # requests 1|2, 2|3, 3|4
        assert acc.batches[0].interval == FIRST
        assert [b.partial for b in acc.batches] == [False] * (len(truth) - 1) + [True]


def test_clean_chunks_sit_on_the_prefill_curve_and_inside_their_prompt(back_to_back):
    """Through the public sequence API: each clean chunk's throughput is the model's speed at
    the request's own cached context; today's rule (a request starts at every #new-seq >= 1
    line) gives request 2 the mixed batch's throughput at 0 cached, off the curve."""
    run, ing, sims = back_to_back
    for wid, sim in sims.items():
        curve = sim.engine.model.prefill
        n = sim.spec.input_len
        seqs = chunk_sequences(ing, "beta", wid)
        assert [c.request for c in seqs] == [1, 2, 3, 4]
        for c in seqs:
            assert len(c.tps) == len(c.cached) == len(c.lines) >= 1
            for tps, cached in zip(c.tps, c.cached, strict=True):
                assert tps == pytest.approx(curve.tps(cached), rel=2e-4)
                assert cached + 4096 <= n
    r2 = chunk_sequences(ing, "beta", "32k")[1]
    assert r2.cached == (2768, 6864, 10960, 15056, 19152, 23248)
    assert r2.next_start is not None and r2.next_start.mixed
    assert [(s.request, s.tokens) for s in r2.next_start.shares] == [(2, 2656), (3, 1440)]


def test_mixed_batches_are_counted_and_named_in_the_figures(back_to_back):
    run, ing, _ = back_to_back
    f = {x.id: x for x in prefill_figures(run, ing)[0]}
    assert f["prefill.32k.beta.mixed_batches"].value == 3
    assert f["prefill.32k.beta.excluded_batches"].value == 4    # 3 mixed + the 1,216 tail
    rec = f["prefill.32k.beta.r1.recovery"]
    assert "mixed batch: 1,328 tokens of request 1 at 28,672 cached, 2,768 of request 2" \
        in rec.method
    assert f["prefill.32k.beta.r1.recovery_clean"].value == pytest.approx(19493.16)
    assert "at 2,768 tokens of its context cached" in f["prefill.32k.beta.r1.recovery_clean"].method
    assert f["prefill.32k.beta.r2.sequence"].value.count("→") == 5
    assert f["prefill.32k.beta.r1.decay_pct"].value == pytest.approx(20.0, abs=1e-6)
    # the partial tail is no phase value; mixed (full) batches are
    assert f["prefill.32k.beta.min"].value == pytest.approx(15915.08)
    tail = window_accounting(ing, "beta", "32k").batches[-1]
    assert tail.partial and tail.line not in f["prefill.32k.beta.min"].sources[0].lines
    src = f["prefill.32k.beta.r1.sequence"].sources
    assert src[0].path.endswith("raw/beta/server.log") and len(src[0].sha256) == 64
    assert src[1].key == "input_lens" and src[1].path.endswith("_30000_1024.jsonl")


def test_requests_arriving_apart_start_after_decode_and_are_left_out(tmp_path):
    run, ing, sims = _generated(tmp_path, "apart", {"8k": 10_000}, {"8k": 3.0})
    acc = window_accounting(ing, "beta", "8k")
    truth = _truth(sims["8k"])
    assert [b.prefill_only for b in acc.batches] == [only for _, only in truth]
    starts = [b for b in acc.batches if any(s.starts for s in b.shares)]
    assert [b.interval for b in starts] == [FIRST, DECODE, DECODE, DECODE]
    assert all(b.tps < 2000 for b in starts[1:])       # decode time in the interval
    f = {x.id: x for x in prefill_figures(run, ing)[0]}
    for k in (2, 3, 4):        # one clean chunk each (the tail is partial): no decay figures
        assert f"prefill.8k.beta.r{k}.decay_pct" not in f
    assert f["prefill.8k.beta.r1.decay_pct"].value == pytest.approx(3.75, abs=1e-6)
    assert "includes decode time" in f["prefill.8k.beta.r1.recovery"].method
    assert f["prefill.8k.beta.min"].value >= 19000


# --- hand-made lines: prefix-cache hits, #new-seq conventions, lengths that do not fit ---

def _ing(prefill: list[tuple], decode_at: tuple[int, ...] = ()) -> Ingested:
    """Prefill lines (new_seq, new_token, cached_token, pending_token, input_tps), numbered
    from 1 in order; a Decode line before each 1-based position in ``decode_at``."""
    rows, line = [], 0
    for i, (seq, tok, hit, pending, tps) in enumerate(prefill, start=1):
        if i in decode_at:
            line += 1
            rows.append({"kind": "decode_batch", "line": line, "running_req": 1,
                         "gen_tps": 50.0})
        line += 1
        rows.append({"kind": "prefill_batch", "line": line, "new_seq": seq, "new_token": tok,
                     "cached_token": hit, "pending_token": pending, "queue_req": 0,
                     "input_tps": tps})
    for r in rows:
        r.update(engine="e", file="raw/e/server.log", sha256="0" * 64,
                 ts=f"2026-01-01T00:00:{r['line']:02d}")
    records = {"prefill_batch": [r for r in rows if r["kind"] == "prefill_batch"],
               "decode_batch": [r for r in rows if r["kind"] == "decode_batch"]}
    return Ingested(records=records, summaries=[], results=[], windows=[
        BenchWindow("e", "w", "2026-01-01T00:00:00", "2026-01-01T00:01:00", "test")])


def test_prefix_cache_hits_cover_prompt_tokens_without_computing_them():
    ing = _ing([(1, 4096, 2000, 3904 + 10000, 20000.0),
                (1, 4096, 6000, 3808, 19000.0),
                (0, 3808, 0, 0, 18000.0)])
    seqs = chunk_sequences(ing, "e", "w", lengths=[10_000, 10_000])
    assert [(c.tps, c.cached) for c in seqs] == [((20000.0,), (2000,)), ((), ())]
    acc = window_accounting(ing, "e", "w", lengths=[10_000, 10_000])
    assert acc.exact
    got = [[(s.request, s.tokens, s.cached, s.completes) for s in b.shares]
           for b in acc.batches]
    assert got == [[(1, 4096, 2000, False)],
                   [(1, 3904, 6096, True), (2, 192, 6000, False)],
                   [(2, 3808, 6192, True)]]
    for b in acc.batches:
        for s in b.shares:
            assert s.cached < 10_000 and s.cached + s.tokens <= 10_000
    assert [b.mixed for b in acc.batches] == [False, True, False]
    assert [b.partial for b in acc.batches] == [False, False, True]


def test_new_seq_that_counts_the_in_progress_request_is_accounted_too():
    # the same batches, logged with #new-seq including the chunked request in progress
    ing = _ing([(1, 4096, 2000, 0, 20000.0), (2, 4096, 6000, 0, 19000.0),
                (1, 3808, 0, 0, 18000.0)])
    acc = window_accounting(ing, "e", "w", lengths=[10_000, 10_000])
    assert acc.exact and "counting the in-progress request too" in english(acc.note)
    assert [len(b.shares) for b in acc.batches] == [1, 2, 1]
    assert acc.batches[1].shares[1].tokens == 192


def test_intervals_after_decode_or_after_finished_work_are_not_prefill_only():
    # r1 = 2 full chunks; r2 arrives later (no pending work left by line 2); r3 after decode
    ing = _ing([(1, 4096, 0, 4096, 20000.0), (0, 4096, 0, 0, 19000.0),
                (1, 4096, 0, 4096, 9000.0), (0, 4096, 0, 0, 19000.0),
                (1, 4096, 0, 4096, 3000.0), (0, 4096, 0, 0, 19000.0)], decode_at=(5,))
    seqs = chunk_sequences(ing, "e", "w", lengths=[8192] * 3)
    assert [c.tps for c in seqs] == [(20000.0, 19000.0), (19000.0,), (19000.0,)]
    acc = window_accounting(ing, "e", "w", lengths=[8192] * 3)
    assert [b.interval for b in acc.batches] == [FIRST, PREFILL, IDLE, PREFILL, DECODE,
                                                 PREFILL]
    assert "no prompt work pending" in seqs[1].excluded[0].reasons()[0]
    # a Decode line before the window's first Prefill line: not assumed prefill only
    first = _ing([(1, 4096, 0, 4096, 5000.0), (0, 4096, 0, 0, 19000.0)], decode_at=(1,))
    assert window_accounting(first, "e", "w", lengths=[8192]).batches[0].interval == DECODE


def test_lengths_that_do_not_fit_fall_back_to_the_new_seq_rule_marked_approximate():
    ing = _ing([(1, 4096, 0, 1, 20000.0), (0, 4096, 0, 1, 19000.0),
                (0, 4096, 0, 1, 18000.0), (1, 4096, 0, 1, 20000.0),
                (0, 4096, 0, 0, 19000.0)])
    with pytest.raises(ValueError, match="belong to no request"):
        account(sorted(ing.records["prefill_batch"], key=lambda r: r["line"]), [5000, 5000])
    acc = window_accounting(ing, "e", "w", lengths=[5000, 5000])
    assert not acc.exact and english(acc.note).startswith("approximate")
    seqs = chunk_sequences(ing, "e", "w", lengths=[5000, 5000])
    assert [c.tps for c in seqs] == [(20000.0, 19000.0, 18000.0), (20000.0, 19000.0)]


@pytest.mark.parametrize("grow", [0, 1], ids=["cached-0", "cached-growing"])
def test_the_fallback_follows_sglangs_own_new_seq_counting(grow):
    """SGLang logs #new-seq as len(can_run_list), the chunked request being continued
    included: a continuation chunk logs 1, a batch with one request's tail and the next
    one's head logs 2. Lengths that do not fit ([5,000, 5,000]) force the fallback; it must
    still give every line to the requests it holds. Real SGLang logs #cached-token 0 on a
    continuation (the chunked request's prefix is not counted as a hit); ``grow`` writes
    the request's context there instead, which must change nothing.

    Apart: two 8,192-token prompts, two full 4,096 chunks each; the first request's second
    chunk leaves nothing pending (#pending-token 0), so the third line starts request 2."""
    apart = _ing([(1, 4096, 0, 4096, 20000.0), (1, 4096, 4096 * grow, 0, 19000.0),
                  (1, 4096, 0, 4096, 20000.0), (1, 4096, 4096 * grow, 0, 19000.0)])
    acc = window_accounting(apart, "e", "w", lengths=[5000, 5000])
    assert [[s.request for s in b.shares] for b in acc.batches] == [[1], [1], [2], [2]]
    assert not acc.exact and "counts the in-progress request too" in english(acc.note)
    assert [b.interval for b in acc.batches] == [FIRST, PREFILL, IDLE, PREFILL]
    seqs = chunk_sequences(apart, "e", "w", lengths=[5000, 5000])
    assert [(c.request, c.tps, c.cached) for c in seqs] == [
        (1, (20000.0, 19000.0), (0, 4096)), (2, (19000.0,), (4096,))]
    # Together: two 10,000-token prompts queued at once. Line 3 holds request 1's last
    # 1,808 tokens and request 2's first 2,288 (#new-seq 2); #pending-token is the queue
    # plus the chunked request's rest after each line.
    together = _ing([(1, 4096, 0, 15904, 20000.0), (1, 4096, 4096 * grow, 11808, 19000.0),
                     (2, 4096, 0, 7712, 18000.0), (1, 4096, 2288 * grow, 3616, 19500.0),
                     (1, 3616, 6384 * grow, 0, 18500.0)])
    acc = window_accounting(together, "e", "w", lengths=[5000, 5000])
    assert not acc.exact
    assert [[s.request for s in b.shares] for b in acc.batches] == [[1], [1], [1, 2], [2], [2]]
    assert [b.mixed for b in acc.batches] == [False, False, True, False, False]
    assert [b.interval for b in acc.batches] == [FIRST] + [PREFILL] * 4
    assert acc.batches[2].split() == ("4,096 tokens of request 1, request 2 (the split "
                                      "between them is unknown: approximate accounting)")
    seqs = chunk_sequences(together, "e", "w", lengths=[5000, 5000])
    assert [(c.request, c.tps) for c in seqs] == [(1, (20000.0, 19000.0)), (2, (19500.0,))]
    assert seqs[0].next_start.line == 3 and seqs[0].next_start.mixed
    assert [b.line for b in seqs[1].batches] == [3, 4, 5]


def test_the_fallback_reads_a_real_sglang_chunked_prompt():
    """Lines 290-292 of data/2026-08-dgx-spark-laguna's sglang-int4.log (SGLang writing
    them): one 16,913-token prompt (37 prefix-cache hits) in chunks of 8,192, 8,192 and 492
    tokens, each logged #new-seq 1, the continuations with #cached-token 0. No prompt
    lengths: the fallback must give all three to one request, its context growing."""
    ing = _ing([(1, 8192, 37, 8684, 1000.0), (1, 8192, 0, 492, 1000.0),
                (1, 492, 0, 0, 1000.0)])
    acc = window_accounting(ing, "e", "w", lengths=[])
    assert not acc.exact
    assert [[(s.request, s.cached, s.starts) for s in b.shares] for b in acc.batches] == [
        [(1, 37, True)], [(1, 8229, False)], [(1, 16421, False)]]


# --- the reference run --------------------------------------------------------------------

@pytest.fixture(scope="module")
@takes_seconds
def reference(tmp_path_factory):
    """The reference run's records as the notebooks read them: ingested, saved to a temp
    report folder and loaded back (no notebook build)."""
    run = load_run("2024-b300", ROOT / "data", tmp_path_factory.mktemp("ref") / "report")
    save_ingest(run, ingest_run(run))
    ing = load_ingested(run)
    figs, seqs = prefill_figures(run, ing)
    return run, ing, {f.id: f for f in figs}, seqs


def test_reference_200k_requests_have_at_most_six_clean_chunks_inside_their_prompt(reference):
    _, _, f, seqs = reference
    r1 = seqs[("sglang", "200k")][0]
    assert r1.tps == (22265.0, 21064.0, 19628.0, 18475.0, 17243.0, 16408.0)
    assert f["prefill.200k.sglang.r1.sequence"].value == \
        "22,265 → 21,064 → 19,628 → 18,475 → 17,243 → 16,408"
    assert len(seqs[("sglang", "200k")]) == 10
    for c in seqs[("sglang", "200k")]:
        assert 5 <= len(c.tps) <= 6
        assert all(x < 200_000 for x in c.cached)
        for b in c.batches:
            s = b.share(c.request)
            assert s.cached + s.tokens <= 200_000
    r10 = seqs[("sglang", "200k")][9]
    assert r10.cached == (2240, 35008, 67776, 100544, 133312, 166080)
    assert f["prefill.200k.sglang.r10.sequence"].value == \
        "22,163 → 20,679 → 19,032 → 17,668 → 16,291 → 15,290"
    assert [b.new_token for b in r10.excluded] == [32768, 1152]    # mixed head, partial tail
    assert f["prefill.200k.sglang.mixed_batches"].value == 9
    assert f["prefill.200k.sglang.excluded_batches"].value == 10


def test_reference_recovery_is_named_a_mixed_batch_and_a_clean_one_is_given(reference):
    _, _, f, _ = reference
    rec = f["prefill.200k.sglang.r1.recovery"]
    assert round(rec.value, 2) == 21316.78
    assert "mixed batch: 3,392 tokens of request 1 at 196,608 cached, 29,376 of request 2" \
        in rec.method
    assert rec.sources[0].lines == (143,)
    clean = f["prefill.200k.sglang.r1.recovery_clean"]
    assert round(clean.value, 2) == 20945.19 and clean.sources[0].lines == (144,)
    assert "at 29,376 tokens of its context cached" in clean.method


def test_reference_64k_decay_has_no_decode_time_in_it(reference):
    """At 64K the requests arrive apart: each one's first chunk follows decode lines and its
    throughput (~6,880 tok/s) covers decode time. Only request 1 (whose first chunk opens the
    window) has two clean chunks: 5.4 %; requests 2-10 have one clean chunk, no decay."""
    _, _, f, _ = reference
    assert round(f["prefill.64k.sglang.r1.decay_pct"].value, 2) == 5.39
    for k in range(2, 11):
        assert f"prefill.64k.sglang.r{k}.decay_pct" not in f
        assert f"prefill.64k.sglang.r{k}.sequence" not in f
    assert all(x.value > 0 for k, x in f.items() if k.endswith(".decay_pct"))
    assert f["prefill.64k.sglang.excluded_batches"].value == 9
    assert f["prefill.64k.sglang.mixed_batches"].value == 0
    assert (f["prefill.64k.sglang.min"].value, f["prefill.64k.sglang.max"].value) == \
        (21064.0, 22265.0)


def test_reference_prefill_range_leaves_out_the_partial_tail(reference):
    _, _, f, _ = reference
    lo = f["prefill.range.min"]
    assert round(lo.value, 2) == 15290.15            # r10's last full chunk, 166,080 cached
    assert lo.sources[0].lines == (197,)              # not 198, the 1,152-token tail (14,311)
    assert f["prefill.200k.sglang.min"].value == lo.value
    assert f["prefill.range.max"].value == 22265.0
    # the phase table's one rule: the tail is the only line it leaves out; the nine mixed
    # batches count (total throughput), as vLLM's intervals of several requests do
    assert f["prefill.200k.sglang.left_out"].context["lines"] == [198]
    assert "line 198 (partial: 1,152 of 32,768 tokens)" in f["prefill.200k.sglang.left_out"].method
    assert f["prefill.200k.sglang.intervals"].value == 61
    assert f["prefill.200k.sglang.mixed_batches"].value == 9
    # vLLM at 64K: the partial first and last intervals and one with an OOM retry left out
    assert f["prefill.64k.vllm.left_out"].context["lines"] == [43, 67, 71]
    assert f["prefill.64k.vllm.intervals"].value == 1 and "prefill.64k.vllm.min" not in f
    assert f["prefill.64k.vllm.mean"].value == 21499.2
    assert f["prefill.200k.vllm.left_out"].context["lines"] == [98, 119]
    assert f["prefill.200k.vllm.intervals"].value == 10


def test_chunk_chart_draws_the_clean_chunks(reference, tmp_path):
    from benchreport.analyses.prefill import chunk_rows
    from benchreport.publish.charts import chunk_chart

    t = {"chart.chunks": "chunks", "chart.cached": "cached", "chart.tps": "tok/s",
         "chart.other_batches": "other batches", "chart.shared_batches": "shared batches"}
    run, _, _, seqs = reference
    svg = str(chunk_chart(run, chunk_rows(seqs), t))
    assert svg.startswith("<svg") and "22265 → 21064 → 19628 → 18475 → 17243 → 16408" in svg
    # 10,000-token prompts arriving apart: request 1's 1,808-token tail (18,500 tok/s) is a
    # partial batch, drawn hollow, not part of the line or the alt text
    run, ing, _ = _generated(tmp_path, "chart", {"32k": 10_000}, {"32k": 3.0})
    assert run.meta.workloads[-1].id == "32k"
    svg = str(chunk_chart(run, chunk_rows(prefill_figures(run, ing)[1]), t))
    assert 'aria-label="chunks: beta 20000 → 19250"' in svg


# --- the phase table: one basis, one rule for every engine -------------------------------------

def _stats_ing(lines: list[tuple[float, int]], events_at: tuple[int, ...] = ()) -> Ingested:
    """Stats lines (prompt_tps, waiting) every 10 s from line 1, and a runtime event logged
    just before each line number in ``events_at``."""
    rows = [{"kind": "engine_stats", "line": i, "prompt_tps": tps, "gen_tps": 1.0,
             "running": 1, "waiting": waiting, "engine": "v", "file": "raw/v/server.log",
             "sha256": "1" * 64, "ts": f"2026-01-01T00:{i:02d}:00"}
            for i, (tps, waiting) in enumerate(lines, start=1)]
    events = [{"kind": "memory_event", "line": 100 + i, "engine": "v", "file": "raw/v/server.log",
               "sha256": "1" * 64, "ts": f"2026-01-01T00:{i - 1:02d}:30"} for i in events_at]
    return Ingested(records={"engine_stats": rows, "memory_event": events}, summaries=[],
                    results=[], windows=[BenchWindow("v", "w", "2026-01-01T00:00:00",
                                                     "2026-01-01T01:00:00", "test")])


def test_stats_intervals_follow_the_one_rule_partial_idle_and_event_left_out():
    from benchreport.analyses.prefill import phase_intervals, phase_values

    # line 1 idle; 2 the first busy one (partial); 3 kept; 4 an event ran in it; 5 kept,
    # nobody left waiting; 6 no prompt throughput (not an interval of prefill); 7 follows it
    # (decode or idle time before its prefill); 8 kept; 9 the last busy one (partial)
    ing = _stats_ing([(0.0, 0), (9000.0, 5), (20000.0, 4), (15000.0, 3), (19000.0, 0),
                      (0.0, 0), (18000.0, 2), (17000.0, 1), (4000.0, 0)], events_at=(4,))
    got = {iv.line: tuple(map(english, iv.why)) for iv in phase_intervals(ing, "v", "w")}
    assert sorted(got) == [2, 3, 4, 5, 7, 8, 9]              # lines with prompt throughput
    assert got[2] == ("partial: the first stats interval of the prefill phase",)
    assert got[9] == ("partial: the last stats interval of the prefill phase",)
    assert got[4] == ("a runtime event ran in it",)
    assert got[7] == ("its time may include decode or idle time (the stats line before it "
                      "shows no prompt work)",)
    assert got[3] == got[5] == got[8] == ()
    values, recs = phase_values(ing, "v", "w")
    assert values == [20000.0, 19000.0, 17000.0] and [r["line"] for r in recs] == [3, 5, 8]


def test_batches_follow_the_same_rule_and_mixed_batches_count():
    from benchreport.analyses.prefill import phase_intervals, phase_values

    # r1 (10,000): 4,096 + 4,096 + 1,808 sharing line 3 with r2 (7,384: 2,288 + 4,096 +
    # 1,000): line 3 is mixed; r2 ends in a partial
    # batch after a Decode line (line 6); an event inside the interval of line 3
    ing = _ing([(1, 4096, 0, 8192, 20000.0), (0, 4096, 0, 4096, 19000.0),
                (1, 4096, 0, 4096, 18500.0), (0, 4096, 0, 1000, 18000.0),
                (0, 1000, 0, 0, 9000.0)], decode_at=(5,))
    ing.records["jit_event"] = [{"kind": "jit_event", "line": 99, "engine": "e",
                                 "ts": "2026-01-01T00:00:03"}]
    acc = window_accounting(ing, "e", "w", lengths=[10_000, 7_384])
    assert [b.mixed for b in acc.batches] == [False, False, True, False, False]
    got = {iv.line: tuple(map(english, iv.why)) for iv in phase_intervals(ing, "e", "w", acc)}
    assert got[1] == got[2] == ()
    assert got[3] == ("a runtime event ran in it",)            # event at :03, line 3 at :03
    assert got[4] == ()                                         # pure, full, after prefill
    assert got[6] == ("partial: 1,000 of 4,096 tokens",
                      "its time includes decode time (a Decode line comes before it)")
    # the mixed batch (line 3) would count if no event had run in it
    del ing.records["jit_event"]
    got = {iv.line: tuple(map(english, iv.why)) for iv in phase_intervals(ing, "e", "w", acc)}
    assert got[3] == ()
    values, recs = phase_values(ing, "e", "w", acc)
    assert [r["line"] for r in recs] == [1, 2, 3, 4] and values[2] == 18500.0


def test_a_row_of_one_interval_has_its_value_and_n_not_min_equal_max():
    from benchreport.analyses.prefill import _phase_figures, phase_intervals

    ing = _stats_ing([(9000.0, 5), (21000.0, 3), (15000.0, 0)])
    ivs = phase_intervals(ing, "v", "w")
    f = {x.id: x for x in _phase_figures(("w", "v"), {}, ivs, ())}
    assert f["prefill.w.v.intervals"].value == 1
    assert f["prefill.w.v.mean"].value == 21000.0
    assert "the one interval kept" in f["prefill.w.v.mean"].method
    assert "prefill.w.v.min" not in f and "prefill.w.v.max" not in f
    assert (f["prefill.w.v.left_out"].value, f["prefill.w.v.left_out"].context["lines"]) == \
        (2, [1, 3])
    assert f["prefill.w.v.interval_s"].value == 60.0          # stats lines a minute apart
    # two or more: min and max, and the mean of equal intervals
    ing = _stats_ing([(9000.0, 5), (21000.0, 3), (19000.0, 3), (15000.0, 0)])
    f = {x.id: x for x in _phase_figures(("w", "v"), {}, phase_intervals(ing, "v", "w"), ())}
    assert (f["prefill.w.v.intervals"].value, f["prefill.w.v.min"].value,
            f["prefill.w.v.max"].value, f["prefill.w.v.mean"].value) == (2, 19000.0, 21000.0,
                                                                         20000.0)
