# %% [markdown]
# # Latency and throughput

# %% tags=["parameters"]
run_id: str = "2024-b300"  # folder under data/
data_root: str = "data"  # folder that holds the runs' inputs
report_root: str = "report"  # folder the report is written to
notebook: str = "20-latency.ipynb"  # this notebook's name, stamped on its figures

# %%
from benchreport.analyses.latency import latency_figures
from benchreport.analyses.notebook import Collector, load_run

run = load_run(run_id, data_root, report_root)
figs = Collector(run, notebook)

# %% [markdown]
# Per engine and input length, from the benchmark clients' result files: request and token
# throughput, and TTFT, TPOT, ITL and E2E latency (mean, median, p90, p99, in ms). TPOT
# leaves the first token out; ITL is the gap between streamed chunks, and under speculative
# decoding a chunk can hold several tokens. Each metric has one definition for every engine:
# recomputed from per-request lists where the file has them for that metric, otherwise the
# client's own statistics. Ratios compare the means, quicker engine named. The ten requests
# of one run are not independent samples, so their spread is shown as a spread (min–max),
# never as a confidence interval.

# %%
figs.add(latency_figures(run))

# %%
figs.save()
