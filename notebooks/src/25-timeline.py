# %% [markdown]
# # Where each request's time went
# One row per request of every point whose result file has per-request rows: when it
# reached the client, the time before its own prefill and that prefill (SGLang: from its
# prefill batches; vLLM: input tokens ÷ the engine's full prefill speed, an estimate), its
# first token, a stall before token 2, its decode and its finish. A phase no file places is
# said to be unplaced. The client's mean TPOT is then split into the stall, the gaps after
# token 2 that overlap another request's pending prompt and the other gaps, against the
# steady decode time per token.

# %% tags=["parameters"]
run_id: str = "2024-b300"  # folder under data/
data_root: str = "data"  # folder that holds the runs' inputs
report_root: str = "report"  # folder the report is written to
notebook: str = "25-timeline.ipynb"  # this notebook's name, stamped on its figures

# %%
from benchreport.analyses.notebook import Collector, load_run, request_timeline, save_timeline
from benchreport.core.tables import load_ingested

run = load_run(run_id, data_root, report_root)
ing = load_ingested(run)
figs = Collector(run, notebook)
table, figures, rows = request_timeline(run, ing)
figs.add(figures)

# %% [markdown]
# Every request's phases (s):

# %%
table

# %%
save_timeline(run, rows)
figs.save()
