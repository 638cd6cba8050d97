# %% [markdown]
# # Prefill

# %% tags=["parameters"]
run_id: str = "2024-b300"  # folder under data/
data_root: str = "data"  # folder that holds the runs' inputs
report_root: str = "report"  # folder the report is written to
notebook: str = "40-prefill.ipynb"  # this notebook's name, stamped on its figures

# %%
from benchreport.analyses.notebook import Collector, load_run, save_chunks
from benchreport.analyses.prefill import prefill_figures
from benchreport.core.tables import load_ingested

run = load_run(run_id, data_root, report_root)
figs = Collector(run, notebook)

# %% [markdown]
# Total prefill throughput per logged interval (a stats interval, or one batch since the
# previous Prefill line), per engine and input length, with how many intervals each row
# keeps: one rule for every engine leaves out partial intervals, intervals whose time may
# include decode or idle time and intervals in which a runtime event ran; intervals holding
# several requests' prompts count (total throughput). And, where the engine logs each
# prefill chunk, every request's chunk sequence: throughput against the context already
# cached, the decay from first to last chunk, and whether the next request starts fast again.

# %%
prefill, sequences = prefill_figures(run, load_ingested(run))
figs.add(prefill)

# %%
save_chunks(run, sequences)
figs.save()
