# %% [markdown]
# # Benchmark points
# Every result file of the run, from whichever client wrote it, read into one shape: one
# point per engine, workload, load level (concurrency or request rate) and repeat. Each
# point's figures are what its file recorded, converted to one set of units (seconds,
# milliseconds, tokens per second), and each latency keeps its client's definition: clients
# do not all define TPOT or ITL the same way, and points are only compared where the
# definitions agree.

# %% tags=["parameters"]
run_id: str = "2024-b300"  # folder under data/
data_root: str = "data"  # folder that holds the runs' inputs
report_root: str = "report"  # folder the report is written to
notebook: str = "15-points.ipynb"  # this notebook's name, stamped on its figures

# %%
from benchreport.analyses.campaign import definitions_table, point_figures
from benchreport.analyses.notebook import Collector, load_run
from benchreport.core.tables import load_ingested

run = load_run(run_id, data_root, report_root)
ing = load_ingested(run)
figs = Collector(run, notebook)
table, figures = point_figures(run, ing)
figs.add(figures)
table

# %% [markdown]
# Each client's definition of each latency it reports:

# %%
definitions_table(ing)

# %%
figs.save()
