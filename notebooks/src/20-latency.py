# %% [markdown]
# # Latency and throughput

# %% tags=["parameters"]
run_id: str = "2024-b300"  # folder under data/
data_root: str = "data"  # folder that holds the runs' inputs
report_root: str = "report"  # folder the report is written to
notebook: str = "20-latency.ipynb"  # this notebook's name, stamped on its figures

# %%
from benchreport.analysis import Collector, load_run
from benchreport.latency import latency_figures

run = load_run(run_id, data_root, report_root)
figs = Collector(run, notebook)

# %% [markdown]
# Per engine and input length, from the benchmark clients' result files: request and token
# throughput, and TTFT, TPOT, ITL and E2E latency (mean, median, p90, p99, in ms). TPOT
# leaves the first token out; ITL is the gap between streamed chunks, and under speculative
# decoding a chunk can hold several tokens. Ratios compare the means, quicker engine named,
# with a 95% bootstrap interval over the requests.

# %%
figs.add(latency_figures(run))

# %%
figs.save()
