"""Figure ids: the one place they are spelled.

Every figure in the registry has a dotted id. Producers (``analyses/``) build ids with the
constructors below, consumers (``publish/``, ``analyses/claimcheck.py``) build the same ids
with the same functions, and the few places that read an id back use the parsers here. No
other module writes an id as an f-string (``tests/test_ids.py`` checks).

Parts are workload ids (``<w>``, e.g. ``64k``), engine ids (``<e>``, e.g. ``vllm``), setting
ids (``<sid>``), claim ids and fixed names; none of them contains a dot.

Families (id — constructor — example):

- ``workload.<w>.<param>`` — ``workload(w, param)``; param input_tokens, output_tokens,
  concurrency, num_prompts — ``workload.64k.input_tokens``
- ``e2e.<w>.<e>.<name>`` — ``e2e(w, e, name)``; duration, to_first_token_s,
  to_last_first_token_s, overlap_s, decode_tail_s — ``e2e.64k.vllm.duration``
- ``e2e.<w>.<name>`` — ``e2e(w, None, name)``; faster, slower, speedup, gap_s, gap.where,
  gap.first_tokens_s, gap.decode_tail_s, gap.first_tokens_share, gap.decode_share,
  gap.first_tokens_lead_s — ``e2e.64k.gap.decode_share``
- ``throughput.<w>.<e>.<name>`` — ``throughput(w, e, name)``; requests, output —
  ``throughput.1k.vllm.output``
- ``latency.<w>.<e>.<metric>.<stat>`` — ``latency(w, e, metric, stat)``; metric ttft, tpot,
  itl, e2el; stat mean, median, p90, p99, min, max — ``latency.64k.sglang.ttft.p99``
- ``latency.<w>.<e>.<name>`` — ``latency_run(w, e, name)``; requests, p99_is_max —
  ``latency.1k.vllm.requests``
- ``latency.<w>.<metric>.<name>`` — ``latency_compare(w, metric, name)``; faster, ratio —
  ``latency.1k.ttft.faster``
- ``decode.<w>.<e>.<name>`` — ``decode(w, e, name)``; steady, min, max, mean, median,
  mean_of_lines, records, per_request, ms_per_token, window, … —
  ``decode.64k.vllm.ms_per_token``
- ``decode.degradation.<e>.<name>`` — ``degradation(e, name)``; mean_over_mean,
  peak_over_mean, lines_over_lines — ``decode.degradation.vllm.peak_over_mean``
- ``decode.context_ratio.<e>`` — ``context_ratio(e)`` — ``decode.context_ratio.vllm``
- ``prefill.<w>.<e>.<name>`` — ``prefill(w, e, name)``; phase, min, max, mean, chunks,
  mixed_batches, excluded_batches — ``prefill.200k.vllm.mean``
- ``prefill.<w>.<e>.r<n>.<name>`` — ``prefill_request(w, e, n, name)``; sequence, decay,
  decay_pct, recovery, recovery_clean — ``prefill.200k.sglang.r1.decay_pct``
- ``prefill.range.<stat>`` — ``prefill_range(stat)``; min, max — ``prefill.range.min``
- ``spec.<w>.<e>.<name>`` — ``spec(w, e, name)``; verdict, drafted, accepted,
  acceptance_pct, accept_len, per_position — ``spec.1k.vllm.accept_len``
- ``model.decode.<e>.<name>`` — ``model_decode(e, name)``; intercept_ms, slope_ms_per_1k,
  max_residual_pct — ``model.decode.vllm.slope_ms_per_1k``
- ``model.crossover.<a>.<b>[.<part>]`` — ``crossover(a, b, part=None)``; the crossover
  itself (the point estimate), or lengths, rounded (the band over every interpolation),
  beyond, and the crossover under the other interpolations, tok_per_s and log_context —
  ``model.crossover.sglang.vllm.rounded``; read back
  with ``parse_crossover(fid)``, found with ``first_crossover(registry)``
- ``stepmodel.<e>.<name>`` — ``step_model(e, name)``; the decode step model and its
  memory-bandwidth lower bound (``analyses.stepmodel``): fit, fixed_ms, ns_per_kv_token,
  points, bound, bound_weights_ms, bound_ns_per_kv_token, experts_per_layer,
  fixed_vs_bound, fixed_over_bound, generator_fixed_ms, generator_ns_per_kv_token —
  ``stepmodel.vllm.fixed_ms``
- ``stepmodel.<e>.<w>.<name>`` — ``step_point(e, w, name)``; step_ms, kv_tokens — one
  point of the step model — ``stepmodel.vllm.64k.step_ms``
- ``events.<w>.<e>.<name>`` — ``events(w, e, name)``; oom_retries, oom_retry_workers,
  oom_errors, jit_compiles, jit_loads, retractions, preemptions — ``events.64k.vllm.jit_loads``;
  read back with ``parse_events(fid)``
- ``setting.<sid>.<e>`` — ``setting(sid, e)`` — ``setting.chunked_prefill.vllm``; read back
  with ``parse_setting(fid)``
- ``caveats.settings_differing`` — ``SETTINGS_DIFFERING``; ``caveats.settings_apart`` —
  ``SETTINGS_APART`` (settings shown side by side but not counted as differing)
- ``limits.<e>.<name>`` — ``limits_engine(e, name)``; warmup_records, kv_capacity_tokens —
  ``limits.vllm.warmup_records``
- ``limits.<w>.<name>`` — ``limits_workload(w, name)``; kv_needed_tokens —
  ``limits.200k.kv_needed_tokens``
- ``limits.<w>.<e>.<name>`` — ``limits_stall(w, e, name)``; first_ttft_s, second_gap_s,
  typical_gap_s, stall_gaps, stall_steps, step_s, stall_s — ``limits.64k.vllm.stall_s``
- ``limits.kv_capacity_ratio.<big>.<small>`` — ``kv_capacity_ratio(big, small)``
- ``limits.repeats``, ``limits.kv_fits``, ``limits.spec_max_accept_len`` — ``REPEATS``,
  ``KV_FITS``, ``SPEC_MAX_ACCEPT_LEN``
- ``point.<point>.<name>`` — ``point(point_id, name)``; a benchmark point of a campaign
  (``<e>.<w>.<load>[.<variant>].r<n>``, from ``ingest.points``) and one of its normalised
  figures: completed, failed, duration, request_throughput, output_throughput,
  ``<stat>_<metric>_ms`` — ``point.vllm.1k.r4.r1.median_ttft_ms``
- ``point.<point>.<name>`` also holds a point's goodput (req/s meeting every objective of the
  run's ``slo``) and validity (a verdict from ``analyses.validity``)
- ``campaign.<name>`` — ``campaign(name)``; points, series, repeats, excluded (what the
  campaign sections describe) — ``campaign.repeats``
- ``curve.<w>.<s>.<load>.<metric>`` — ``curve(w, s, load, metric)``; a series (``<s>``: an
  engine, with its variant: ``series(e, variant)``) at one load, the mean over its valid
  repeats of output_throughput, output_throughput_per_gpu, request_throughput, goodput,
  interactivity, ``<stat>_<metric>_ms`` — ``curve.1k.vllm.c16.output_throughput``
- ``curve.<w>.<s>.<name>`` — ``curve_series(w, s, name)``; knee — ``curve.1k.vllm.knee``
- ``pareto.<w>.<s>.frontier`` and ``pareto.<w>.<a>.<b>.<name>`` — ``pareto(w, a, b, name)``
  (b None for one series); crossings, cross<i>, seg<i>.leader, seg<i>.from, seg<i>.to —
  ``pareto.1k.vllm.sglang.cross1``
- ``slo.<w>.<s>.<name>`` — ``slo(w, s, name)``; capacity, capacity_output, <load>.meets —
  ``slo.1k.vllm.capacity``
- ``cost.<w>.<s>.<name>`` — ``cost(w, s, name)``; <load>, at_capacity (USD per million
  output tokens) — ``cost.1k.vllm.c16``
- ``compare.<w>.<a>.<b>.<load>.<metric>[.verdict]`` — ``compare(w, a, b, load, metric,
  part)``; the ratio a ÷ b of two series' means with its interval, and its verdict;
  ``compare.<w>.<a>.<b>.<metric>.<verdict>`` — ``compare_count(w, a, b, metric, verdict)``:
  how many loads have that verdict — ``compare.1k.vllm.sglang.c16.output_throughput``
- ``diff.<rk>.<name>`` — ``diff(rk, name)``; what differs between the base run and run
  ``<rk>`` (a run key: ``run_key(run_id)``) of a comparison across runs: count, groups, and
  ``<item>.from`` / ``<item>.to`` per differing item (``diff(rk, item, "to")``) —
  ``diff.2024-b300-vllm-next.engine-vllm-version.to``
- ``delta.<ra>.<rb>.<e>.<w>.<load>.<metric>[.<part>]`` — ``delta(ra, rb, e, w, load, metric,
  part)``; one matched point's metric in run ``<rb>`` against run ``<ra>``: the ratio rb ÷ ra,
  part low, high, verdict, from, to —
  ``delta.2024-b300.2024-b300-vllm-next.vllm.64k.c10.mean_ttft_ms.verdict``;
  ``delta.<ra>.<rb>.<name>`` — ``delta_count(ra, rb, name)``; matched, improved, regressed,
  within_noise, no_interval, only_<rk> — ``delta.2024-b300.2024-b300-vllm-next.regressed``
- ``trend.<e>.<w>.<load>.<metric>.<rk>`` — ``trend(e, w, load, metric, rk)``; a metric of
  one point at each run of a comparison of three or more — ``trend.vllm.64k.c10.duration.2024-b300``
- ``history.<e>.<w>.<load>.<metric>.<name>[.<part>]`` — ``history(e, w, load, metric, name,
  part)``; one point's metric over a run history of the store (``analyses.history``): runs,
  noise, verdict, changes, ``value.<rk>`` (the metric in run ``<rk>``) and, for the i-th
  level change, ``change<i>`` (the ratio after ÷ before) with part low, high, p_value, run,
  before, after — ``history.vllm.1k.c16.p99_ttft_ms.change1.low``
- ``consistency.<w>.<e>.<check>[.<part>]`` — ``consistency(w, e, check, part)``; whether the
  client and the engine's log agree on a quantity (check: duration), part client, server,
  tolerance — ``consistency.64k.vllm.duration.server``
- ``server.<w>.<e>.<name>`` — ``server(w, e, name)``; what the engine's /metrics scrapes
  say about one benchmark: scrapes, interval_s, prompt_tokens, generation_tokens,
  throughput, preemptions, requests_finished, prefix_hit_pct, spec_acceptance_pct,
  spec_accept_len, kv_usage_{min,mean,max}, running_*, waiting_*, ttft_p50_ms, … —
  ``server.64k.vllm.throughput``
- ``state.<w>.<e>.<name>`` — ``state(w, e, name)``; the server's state over one benchmark
  window from its log lines (``analyses.state``): queued_s (seconds with a request
  waiting), queued_lead_s (the window's start to a first line that shows a queue),
  line_spacing_s, preemptions (vLLM), retractions (SGLang) — ``state.64k.vllm.queued_s``; peak KV
  usage and the hit rate are ``cache.*``, peak waiting ``arrival.<w>.<e>.max_waiting``
- ``timeline.<w>.<e>[.<at>].<name>`` — ``timeline(w, e, name, at)``; ``at`` the place of a
  point of a sweep or of repeats (``point_place``: ``c4.r1``); where each request's time went
  (``analyses.timeline``): requests, prefill_basis, prefill_substituted, wait_share,
  longest_wait_s,
  longest_wait_prefill_s, longest_wait_request, stalls, longest_stall_s,
  longest_stall_token2_s, shared_gaps, shared_gap_min_s, shared_gap_max_s, tpot_stall_ms,
  tpot_shared_ms, tpot_gaps_ms, tpot_sum_ms, tpot_closure_ms, tpot_steady_ms,
  tpot_other_ms — ``timeline.64k.vllm.wait_share``
- ``claim.<id>`` — ``claim(cid)`` — ``claim.decode_drop``
- ``claims.informative`` — ``CLAIMS_INFORMATIVE``; ``claims.indistinguishable`` —
  ``CLAIMS_INDISTINGUISHABLE``; ``claims.contradicted`` — ``CLAIMS_CONTRADICTED``;
  ``claims.mixed`` — ``CLAIMS_MIXED``; ``claims.differs_published`` —
  ``CLAIMS_DIFFERS_PUBLISHED``; ``claims.unexplained`` — ``CLAIMS_UNEXPLAINED``

``well_formed(fid)`` says whether an id is spelled as one of these families.

A part may be ``"*"`` to spell an fnmatch pattern (``setting("*", "vllm")``). Ids listed in
``claims.yaml`` and the patterns of ``publish.sections.CHOSEN_BY`` stay text.
"""

from __future__ import annotations

from collections.abc import Iterable

SETTINGS_DIFFERING = "caveats.settings_differing"
SETTINGS_APART = "caveats.settings_apart"
REPEATS = "limits.repeats"
KV_FITS = "limits.kv_fits"
SPEC_MAX_ACCEPT_LEN = "limits.spec_max_accept_len"
CLAIMS_INFORMATIVE = "claims.informative"
CLAIMS_INDISTINGUISHABLE = "claims.indistinguishable"
CLAIMS_CONTRADICTED = "claims.contradicted"
CLAIMS_MIXED = "claims.mixed"
CLAIMS_DIFFERS_PUBLISHED = "claims.differs_published"
CLAIMS_UNEXPLAINED = "claims.unexplained"


def _join(*parts: object) -> str:
    return ".".join(str(p) for p in parts if p is not None)


# --- constructors -------------------------------------------------------------------------

def workload(w: str, param: str) -> str:
    return _join("workload", w, param)


def e2e(w: str, engine: str | None, name: str) -> str:
    """``e2e.<w>.<e>.<name>``, or ``e2e.<w>.<name>`` when ``engine`` is None."""
    return _join("e2e", w, engine, name)


def throughput(w: str, engine: str, name: str) -> str:
    return _join("throughput", w, engine, name)


def throughput_decline(engine: str) -> str:
    """``throughput.decline.<e>``: how far ``engine``'s output throughput fell from the
    shortest input to the longest (analyses.latency)."""
    return _join("throughput", "decline", engine)


def latency(w: str, engine: str, metric: str, stat: str) -> str:
    return _join("latency", w, engine, metric, stat)


def latency_run(w: str, engine: str, name: str) -> str:
    return _join("latency", w, engine, name)


def latency_compare(w: str, metric: str, name: str) -> str:
    return _join("latency", w, metric, name)


def decode(w: str, engine: str, name: str) -> str:
    return _join("decode", w, engine, name)


def degradation(engine: str, name: str) -> str:
    return _join("decode", "degradation", engine, name)


def context_ratio(engine: str) -> str:
    return _join("decode", "context_ratio", engine)


def prefill(w: str, engine: str, name: str) -> str:
    return _join("prefill", w, engine, name)


def prefill_request(w: str, engine: str, request: int, name: str) -> str:
    return _join("prefill", w, engine, f"r{request}", name)


def prefill_range(stat: str) -> str:
    return _join("prefill", "range", stat)


def spec(w: str, engine: str, name: str) -> str:
    return _join("spec", w, engine, name)


def cache(w: str, engine: str, name: str) -> str:
    """``cache.<w>.<e>.<name>``: the prefix cache and KV cache of one engine in one window."""
    return _join("cache", w, engine, name)


def spec_run(engine: str, name: str) -> str:
    """``specrun.<e>.<name>``: speculative decoding over every placed window of an engine."""
    return _join("specrun", engine, name)


def model_decode(engine: str, name: str) -> str:
    return _join("model", "decode", engine, name)


def step_model(engine: str, name: str) -> str:
    """``stepmodel.<e>.<name>``: the decode step model of one engine and its bound."""
    return _join("stepmodel", engine, name)


def step_point(engine: str, w: str, name: str) -> str:
    """``stepmodel.<e>.<w>.<name>``: one workload's point of an engine's step model."""
    return _join("stepmodel", engine, w, name)


def crossover(a: str, b: str, part: str | None = None) -> str:
    """``model.crossover.<a>.<b>`` (the crossover itself) or ``….<part>``."""
    return _join("model", "crossover", a, b, part)


def events(w: str, engine: str, name: str) -> str:
    return _join("events", w, engine, name)


def setting(sid: str, engine: str) -> str:
    return _join("setting", sid, engine)


def limits_engine(engine: str, name: str) -> str:
    return _join("limits", engine, name)


def limits_workload(w: str, name: str) -> str:
    return _join("limits", w, name)


def limits_stall(w: str, engine: str, name: str) -> str:
    return _join("limits", w, engine, name)


def arrival(w: str, engine: str, name: str) -> str:
    """How ``engine`` received workload ``w``'s requests, from its log (analyses.arrival)."""
    return _join("arrival", w, engine, name)


def budget(w: str, engine: str, name: str) -> str:
    """``budget.<w>.<e>.<name>``: workload ``w``'s time at ``engine``'s steady rates
    (analyses.budget)."""
    return _join("budget", w, engine, name)


def timeline(w: str, engine: str, name: str, at: str | None = None) -> str:
    """``timeline.<w>.<e>[.<at>].<name>``: where one engine's requests' time went at workload
    ``w`` (analyses.timeline); ``at`` places a point of a sweep or of repeats
    (``point_place``), absent for a workload's one point.

    >>> timeline("64k", "vllm", "requests"), timeline("1k", "vllm", "requests", "c4.r1")
    ('timeline.64k.vllm.requests', 'timeline.1k.vllm.c4.r1.requests')
    """
    return _join("timeline", w, engine, at, name)


def timeline_group(w: str, engine: str) -> str:
    """``timeline.<w>.<e>``: the group every timeline figure of an engine and workload is
    within, its one point's and its sweep points' alike."""
    return _join("timeline", w, engine)


def point_place(point_id: str, engine: str, w: str) -> str:
    """A point's place within its engine and workload: its id after ``<e>.<w>.``.

    >>> point_place("vllm.1k.c4.r2", "vllm", "1k")
    'c4.r2'
    """
    head = f"{engine}.{w}."
    return point_id[len(head):] if point_id.startswith(head) else point_id


def point_stem(point_id: str) -> str:
    """A point id without its repeat: what the repeats of one point share.

    >>> point_stem("vllm.1k.c4.r2"), point_stem("vllm.1k.c4.max_num_seqs_4.r1")
    ('vllm.1k.c4', 'vllm.1k.c4.max_num_seqs_4')
    """
    head, _, last = point_id.rpartition(".")
    return head if head and last[:1] == "r" and last[1:].isdigit() else point_id


def generator(key: str) -> str:
    """One input of a reconstruction's generator (its scenario), as the report states it."""
    return _join("generator", key)


def kv_capacity_ratio(big: str, small: str) -> str:
    return _join("limits", "kv_capacity_ratio", big, small)


def point(point_id: str, name: str) -> str:
    return f"point.{point_id}.{name}"


def parse_point(fid: str) -> tuple[str, str] | None:
    """``(point id, name)`` of a ``point.<point id>.<name>`` id, else None (a point id holds
    dots of its own: ``vllm.64k.c10.r1``).

    >>> parse_point("point.vllm.64k.c10.r1.validity")
    ('vllm.64k.c10.r1', 'validity')
    >>> parse_point("latency.64k.vllm.ttft.mean") is None
    True
    """
    head, _, rest = fid.partition(".")
    if head != "point" or "." not in rest:
        return None
    pid, _, name = rest.rpartition(".")
    return pid, name


def claim(cid: str) -> str:
    return _join("claim", cid)


def series(engine: str, variant: str = "") -> str:
    """A curve's series: the engine, and its variant (``vllm-client-guidellm``)."""
    return engine if not variant else f"{engine}-{variant.replace(',', '-')}"


def campaign(name: str) -> str:
    return _join("campaign", name)


def curve(w: str, s: str, load: str, metric: str) -> str:
    return _join("curve", w, s, load, metric)


def curve_series(w: str, s: str, name: str) -> str:
    return _join("curve", w, s, name)


def pareto(w: str, a: str, b: str | None, name: str) -> str:
    return _join("pareto", w, a, b, name)


def slo(w: str, s: str, name: str) -> str:
    return _join("slo", w, s, name)


def cost(w: str, s: str, name: str) -> str:
    return _join("cost", w, s, name)


def compare(w: str, a: str, b: str, load: str, metric: str, part: str | None = None) -> str:
    return _join("compare", w, a, b, load, metric, part)


def compare_count(w: str, a: str, b: str, metric: str, verdict: str) -> str:
    return _join("compare", w, a, b, metric, verdict)


# --- reading ids back ---------------------------------------------------------------------

def consistency(w: str, engine: str, check: str, part: str | None = None) -> str:
    return _join("consistency", w, engine, check, part)


def server(w: str, engine: str, name: str) -> str:
    return _join("server", w, engine, name)


def state(w: str, engine: str, name: str) -> str:
    """``state.<w>.<e>.<name>``: the server's state over one benchmark window (its log)."""
    return _join("state", w, engine, name)


def run_key(run_id: str) -> str:
    """A run id as an id part (ids split on dots; run ids may hold them)."""
    return run_id.replace(".", "_")


def load_part(load: str, variant: str = "") -> str:
    """A point's load as an id part of a comparison, with its variant when it has one
    (characters other than letters, digits, ``_`` and ``-`` made ``_``).

    >>> load_part("c16", "fp8 kv")
    'c16-fp8_kv'
    >>> load_part("r4")
    'r4'
    """
    if not variant:
        return load
    import re

    return f"{load}-{re.sub(r'[^A-Za-z0-9_-]+', '_', variant).strip('_') or '_'}"


def diff(rk: str, name: str, part: str | None = None) -> str:
    return _join("diff", rk, name, part)


def delta(ra: str, rb: str, engine: str, w: str, load: str, metric: str,
          part: str | None = None) -> str:
    return _join("delta", ra, rb, engine, w, load, metric, part)


def delta_count(ra: str, rb: str, name: str) -> str:
    return _join("delta", ra, rb, name)


def trend(engine: str, w: str, load: str, metric: str, rk: str) -> str:
    return _join("trend", engine, w, load, metric, rk)


def history(engine: str, w: str, load: str, metric: str, name: str,
            part: str | None = None) -> str:
    """``history.<e>.<w>.<load>.<metric>.<name>[.<part>]``: one point's metric over a run
    history (``analyses.history``); ``name`` ``value`` with the run key as ``part`` is the
    metric in that run, ``change<i>`` (``history_change(i)``) the i-th level change."""
    return _join("history", engine, w, load, metric, name, part)


def history_change(i: int) -> str:
    """The name part of the ``i``-th (1-based) level change of a history: ``change1``."""
    return f"change{i}"


def family(fid: str) -> str:
    """The family of an id, its first part: ``family("curve.1k.vllm.c4.ttft") == "curve"``."""
    return fid.split(".", 1)[0]


def parent(fid: str) -> str:
    """An id without its last part: the group its siblings share (``curve.1k.vllm.c4``)."""
    return fid.rsplit(".", 1)[0]


def leaf(fid: str) -> str:
    """The last part of an id: the name within its group (``output_throughput``)."""
    return fid.rsplit(".", 1)[-1]


def within(fid: str, group: str) -> bool:
    """Whether ``fid`` is the id ``group`` or one under it: ``within("decode.64k.vllm.min",
    "decode.64k.vllm")``; ``decode.64k.vllm2.min`` is not.

    >>> within("decode.64k.vllm.min", "decode.64k.vllm"), within("decode.64k.vllm2.min",
    ...                                                          "decode.64k.vllm")
    (True, False)
    """
    return fid == group or fid.startswith(group + ".")


def named_by(fid: str, entry: str) -> bool:
    """Whether an entry of run.yaml's ``assumed[].figures`` names ``fid``: the id itself,
    or, ending in ``.``, every id under that group.

    >>> named_by("e2e.64k.vllm.duration", "e2e.64k."), named_by("e2e.64k", "e2e.64k.")
    (True, False)
    """
    return fid == entry or (entry.endswith(".") and fid.startswith(entry))


def latency_field(stat: str, metric: str) -> str:
    """The name of a latency statistic of a point or a curve, ``<stat>_<metric>_ms``
    (``p99_ttft_ms``): the leaf of ``point`` and ``curve`` ids, a metric of ``compare``."""
    return f"{stat}_{metric}_ms"


def parse_latency_field(name: str) -> tuple[str, str] | None:
    """``(stat, metric)`` of a ``latency_field(stat, metric)`` name, else None.

    >>> parse_latency_field("p99_ttft_ms"), parse_latency_field("output_throughput")
    (('p99', 'ttft'), None)
    """
    parts = name.split("_")
    return (parts[0], parts[1]) if len(parts) == 3 and parts[2] == "ms" and all(parts) \
        else None


def parse_latency(fid: str) -> tuple[str, str, str, str] | None:
    """``(w, engine, metric, stat)`` of a ``latency(w, e, metric, stat)`` id, else None.

    >>> parse_latency("latency.64k.sglang.ttft.p99")
    ('64k', 'sglang', 'ttft', 'p99')
    >>> parse_latency("latency.1k.ttft.faster") is None
    True
    """
    parts = fid.split(".")
    if len(parts) != 5 or parts[0] != "latency":
        return None
    return parts[1], parts[2], parts[3], parts[4]


def parse_consistency(fid: str) -> tuple[str, str, str] | None:
    """``(w, engine, check)`` of a ``consistency(w, e, check)`` id (no part), else None.

    >>> parse_consistency("consistency.64k.vllm.output_tokens")
    ('64k', 'vllm', 'output_tokens')
    """
    parts = fid.split(".")
    if len(parts) != 4 or parts[0] != "consistency":
        return None
    return parts[1], parts[2], parts[3]


def parse_setting_pair(key: str) -> tuple[str, str] | None:
    """``(setting id, engine)`` of ``<sid>.<e>``, the key the settings check gives each
    engine's value by, else None.

    >>> parse_setting_pair("memory.sglang")
    ('memory', 'sglang')
    """
    parts = key.split(".")
    return (parts[0], parts[1]) if len(parts) == 2 and all(parts) else None


def parse_crossover(fid: str) -> tuple[str, str, str | None] | None:
    """``(a, b, part)`` of a crossover id (``part`` None for the crossover itself), else None.

    >>> parse_crossover("model.crossover.sglang.vllm.rounded")
    ('sglang', 'vllm', 'rounded')
    >>> parse_crossover("model.decode.vllm.intercept_ms") is None
    True
    """
    parts = fid.split(".")
    if parts[:2] != ["model", "crossover"] or len(parts) not in (4, 5):
        return None
    return parts[2], parts[3], parts[4] if len(parts) == 5 else None


def first_crossover(registry: Iterable[str]) -> tuple[str, str] | None:
    """The engine pair of the first crossover (``model.crossover.<a>.<b>``) in ``registry``
    order, or None."""
    for fid in registry:
        p = parse_crossover(fid)
        if p is not None and p[2] is None:
            return p[0], p[1]
    return None


def parse_events(fid: str) -> tuple[str, str, str] | None:
    """``(workload, engine, name)`` of an ``events.<w>.<e>.<name>`` id, else None.

    >>> parse_events("events.64k.vllm.jit_compiles")
    ('64k', 'vllm', 'jit_compiles')
    """
    parts = fid.split(".")
    if parts[0] != "events" or len(parts) != 4:
        return None
    return parts[1], parts[2], parts[3]


def parse_setting(fid: str) -> tuple[str, str] | None:
    """``(sid, engine)`` of a ``setting.<sid>.<e>`` id, else None.

    >>> parse_setting("setting.chunked_prefill.vllm")
    ('chunked_prefill', 'vllm')
    """
    parts = fid.split(".")
    if parts[0] != "setting" or len(parts) != 3:
        return None
    return parts[1], parts[2]


FAMILIES = ("workload", "e2e", "throughput", "latency", "decode", "prefill", "spec", "model",
            "events", "setting", "caveats", "limits", "claim", "claims", "point",
            "campaign", "curve", "pareto", "slo", "cost", "compare", "diff", "delta", "trend",
            "history", "consistency", "server", "cache", "specrun", "arrival", "generator",
            "stepmodel", "state", "timeline", "budget")


def well_formed(fid: str) -> bool:
    """Whether ``fid`` is spelled as one of the families above: a known first part and
    dot-separated non-empty parts of lower-case letters, digits, ``_``, ``-`` (and ``*`` in
    patterns is not allowed here).

    >>> well_formed("e2e.64k.vllm.duration"), well_formed("e2e..duration")
    (True, False)
    """
    import re

    parts = fid.split(".")
    return (parts[0] in FAMILIES and len(parts) >= 2
            and all(re.fullmatch(r"[A-Za-z0-9_\-]+", p) for p in parts))
