# %% [markdown]
# # Decode scalability

# %% tags=["parameters"]
run_id: str = "2024-b300"  # folder under data/
data_root: str = "data"  # folder that holds the runs' inputs
report_root: str = "report"  # folder the report is written to
notebook: str = "30-decode.ipynb"  # this notebook's name, stamped on its figures

# %%
from benchreport.analyses.decode import decode_figures
from benchreport.analyses.notebook import Collector, load_run
from benchreport.analyses.stepmodel import stepmodel_figures
from benchreport.core.tables import load_ingested

run = load_run(run_id, data_root, report_root)
figs = Collector(run, notebook)

# %% [markdown]
# The steady phase is where every request of the workload decodes: from the engine logs,
# records with all requests running, none waiting and no prefill in the interval. Within it:
# total decode throughput (min, max, mean, median), per-request speed and time per token,
# and the degradation from the shorter to the longer context on one basis (mean over mean)
# and, separately flagged, on the mixed basis a published ratio used (peak over mean).

# %%
ing = load_ingested(run)
decode, phases = decode_figures(run, ing)
figs.add(decode)

# %% [markdown]
# What limits decode: each engine's step time split into a fixed cost and a cost per KV
# token (from the steady throughput, the batch and the accepted length; KV tokens per step
# ≈ batch × (input + output ÷ 2)), against a memory-bandwidth lower bound from the inputs
# run.yaml declares (HBM bandwidth, the model's architecture). For a reconstruction the
# generator's step model is shown beside the fit: the fit recovers what it assumed.

# %%
figs.add(stepmodel_figures(run, ing, decode))

# %%
figs.save()
