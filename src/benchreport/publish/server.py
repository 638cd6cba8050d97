"""The "Server view" section: what the engines' /metrics scrapes say, next to the client."""

from __future__ import annotations

from markupsafe import Markup, escape

from ..core import ids
from ..core.i18n import sentence
from ..core.verdicts import CONSISTENT
from .narrative_base import Writer
from .sections import Section, Table

# the checks of the client against the server's counters (analyses.consistency)
METRIC_CHECKS = ("metrics_span", "output_tokens", "requests", "spec_acceptance")

# (figure name, catalogue key of the column)
COLUMNS = (("interval_s", "server.col.interval"), ("throughput", "server.col.throughput"),
           ("generation_tokens", "server.col.tokens"),
           ("preemptions", "server.col.preemptions"), ("kv_usage_max", "server.col.kv_max"),
           ("waiting_max", "server.col.waiting_max"), ("ttft_p99_ms", "server.col.ttft_p99"))


def server_section(w: Writer) -> Section | None:
    """Per engine and workload with scrapes: the server's throughput and tokens beside the
    client's, preemptions, KV and queue peaks, and a bucket-estimated TTFT p99."""
    t = w.t
    rows, notes = [], []
    for wl in w.run.meta.workloads:
        for e in w.run.meta.engines:
            def s(name: str, wid: str = wl.id, eid: str = e.id) -> str:
                return ids.server(wid, eid, name)

            if not w.has(s("scrapes")):
                continue
            client_tp = ids.throughput(wl.id, e.id, "output")
            client_tokens = ids.consistency(wl.id, e.id, "output_tokens", "client")
            cells = [Markup(escape(w.engine_name(e.id))), Markup(escape(wl.label)),
                     w.fig(s("scrapes")).html]
            cells.append(w.fig(client_tp).html if w.has(client_tp) else Markup("–"))
            cells.append(w.fig(client_tokens).html if w.has(client_tokens) else Markup("–"))
            cells += [w.fig(s(name)).html if w.has(s(name)) else Markup("–")
                      for name, _ in COLUMNS]
            rows.append(cells)
            for name in ("generation_tokens", "prompt_tokens", "preemptions"):
                fid = s(name)
                if w.has(fid) and w.registry[fid].context.get("status") == "reset":
                    notes.append(sentence(t["server.reset"], engine=w.name(e.id),
                                          label=wl.label, link=w.link(fid, t["server.why"])))
                    break
            if w.has(s("spec_accept_len_gauge")):
                notes.append(sentence(t["server.sglang_gauge"], engine=w.name(e.id),
                                      label=wl.label, value=w.fig(s("spec_accept_len_gauge"))))
    if not rows:
        return None
    verdicts = [w.registry[f].value for f in w.registry
                if (ids.parse_consistency(f) or ("", "", ""))[2] in METRIC_CHECKS
                and w.registry[f].unit == "verdict"]
    if verdicts and all(v == CONSISTENT for v in verdicts):
        notes.insert(0, Markup(escape(t["server.agree"])))
    header = [t["table.engine"], t["server.col.workload"], t["server.col.scrapes"],
              t["server.col.client_throughput"], t["server.col.client_tokens"]] + \
        [str(sentence(t[key], p="p99")) for _, key in COLUMNS]
    return Section(id="server", heading=t["server.heading"],
                   paragraphs=[sentence(t["server.intro"], p="p99",
                                        caveats=Markup('<a href="#caveats">{}</a>').format(
                                            t["heading.caveats"]))] + notes,
                   tables=[Table(header=header, rows=rows, numeric=tuple(range(2, 12)))])
