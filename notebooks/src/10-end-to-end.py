# %% [markdown]
# # End-to-end duration and speedup
# Reads each engine's benchmark-client result file and compares how long each engine took for
# the same workload. Speedup = duration of the slower engine ÷ duration of the faster engine.
# When every request is sent at the start, each duration splits at the last request's first
# token (the largest TTFT): before it, queueing and prefill with decode interleaved; after
# it, decode only. The gap between two engines splits the same way, and that split, not a
# fixed sentence, decides how the report explains the gap.

# %% tags=["parameters"]
run_id: str = "2024-b300"  # folder under data/
data_root: str = "data"  # folder that holds the runs' inputs
report_root: str = "report"  # folder the report is written to
notebook: str = "10-end-to-end.ipynb"  # this notebook's name, stamped on its figures

# %%
from benchreport.analyses.notebook import end_to_end, load_run, save_figures, workload_figures

run = load_run(run_id, data_root, report_root)
e2e = end_to_end(run)

# %% [markdown]
# Durations as written by the benchmark clients (one row per engine and workload):

# %%
e2e.table

# %% [markdown]
# The figures this notebook registers (value, unit, and how each was derived):

# %%
import pandas as pd

pd.DataFrame([{"id": f.id, "value": f.value, "unit": f.unit, "method": f.method}
              for f in e2e.figures])

# %%
save_figures(run, workload_figures(run) + e2e.figures, notebook)
