# %% [markdown]
# # Where the engines cross (a model)

# %% tags=["parameters"]
run_id: str = "2024-b300"  # folder under data/
data_root: str = "data"  # folder that holds the runs' inputs
report_root: str = "report"  # folder the report is written to
notebook: str = "60-crossover.ipynb"  # this notebook's name, stamped on its figures

# %%
from benchreport.analyses.crossover import crossover_figures
from benchreport.analyses.decode import decode_figures
from benchreport.analyses.notebook import Collector, load_run
from benchreport.core.tables import load_ingested

run = load_run(run_id, data_root, report_root)
figs = Collector(run, notebook)

# %% [markdown]
# Where the engines' steady per-token decode times would be equal. With two context lengths
# this is a linear interpolation between them, and the straight-line form is an assumption
# that two points cannot test; a fitted model (intercept, slope) is registered only with
# three or more lengths. Which quantity is taken as straight is a choice too: the point
# estimate takes the time per output token linear in the context; the same points taken as
# linear in per-request speed (tok/s) or in the logarithm of the context cross elsewhere.
# All three are registered, and the band (`rounded`) covers them, rounded outward to what
# the data supports.

# %%
_, phases = decode_figures(run, load_ingested(run))
figs.add(crossover_figures(run, phases))

# %%
figs.save()
