# %% [markdown]
# # What was not controlled

# %% tags=["parameters"]
run_id: str = "2024-b300"  # folder under data/
data_root: str = "data"  # folder that holds the runs' inputs
report_root: str = "report"  # folder the report is written to
notebook: str = "70-caveats.ipynb"  # this notebook's name, stamped on its figures

# %%
from benchreport.analyses.notebook import Collector, caveats, load_run, save_caveats
from benchreport.core.tables import load_ingested

run = load_run(run_id, data_root, report_root)
figs = Collector(run, notebook)

# %% [markdown]
# Every setting that differs between the engines (from the launch configurations and the
# engines' own start-up lines) and every runtime event inside a measurement (OOM retries,
# JIT compilations, retractions, preemptions), each with its evidence as file:line; and what a
# single run cannot tell (one run per engine, no warm-up, percentiles of few requests, the
# time runtime events cost, KV capacity, speculative decoding that accepts almost nothing).

# %%
cav = caveats(run, load_ingested(run))
cav.table

# %%
figs.add(cav.figures)

# %%
save_caveats(run, cav)
figs.save()
