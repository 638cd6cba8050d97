# %% [markdown]
# # What the server's own metrics say
# Where the run kept the engines' Prometheus `/metrics` (scraped before and after each
# benchmark, or at intervals), each benchmark's counters are differenced between the scrape
# just before it and the one just after: prompt and generation tokens (so the server's own
# throughput), preemptions, finished requests, prefix-cache hits, speculative acceptance.
# Gauges (KV-cache usage, running and waiting requests) are summarised over the scrapes
# inside the benchmark, and latency histograms give bucket estimates of their quantiles.
# A counter that went down between scrapes was reset (a restart) and is not differenced.
# A run without scrapes has no /metrics figures.
#
# The engines' own stats lines inside each benchmark give the server's state too, scrapes or
# not: running and waiting requests and KV-cache usage at each vLLM `Engine 000` line and
# each SGLang Prefill/Decode batch line, the seconds with a request waiting, and
# preemptions (vLLM) or retractions (SGLang) where the log era prints them
# (`benchreport.analyses.state`).

# %% tags=["parameters"]
run_id: str = "2024-b300"  # folder under data/
data_root: str = "data"  # folder that holds the runs' inputs
report_root: str = "report"  # folder the report is written to
notebook: str = "55-server.ipynb"  # this notebook's name, stamped on its figures

# %%
from benchreport.analyses.notebook import Collector, load_run, save_server_series, server_view
from benchreport.core.tables import load_ingested

run = load_run(run_id, data_root, report_root)
ing = load_ingested(run)
figs = Collector(run, notebook)
table, figures, series = server_view(run, ing)
figs.add(figures)
table

# %% [markdown]
# Running and waiting requests and KV-cache usage at each stats line (source log) and each
# scrape (source metrics) inside a benchmark (the report's charts):

# %%
series[:20]

# %%
save_server_series(run, series)
figs.save()
