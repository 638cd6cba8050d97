# %% [markdown]
# # Benchmark points and what the campaign shows
# Every result file of the run, from whichever client wrote it, read into one shape: one
# point per engine, workload, load level (concurrency or request rate) and repeat. Each
# point's figures are what its file recorded, converted to one set of units (seconds,
# milliseconds, tokens per second), and each latency keeps its client's definition: clients
# do not all define TPOT or ITL the same way, and points are only compared where the
# definitions agree.
#
# For workloads measured at several loads or with repeats, the campaign: each engine's load
# curve (the mean over repeats with its 95% interval), the knee where throughput stops
# rising, the Pareto frontier of throughput per GPU against the speed one user sees, the
# highest load within the run's latency objectives (SLO), goodput, cost, the validity of
# every point, and each engine comparison with its interval. Intervals come from repeats
# only (on the log scale, so a latency or throughput never gets a bound below zero): the
# requests of one run are not independent samples.
#
# Every point of the run is checked, single-point runs included: failures, requests sent,
# the load driven or the server saturated (or that the files cannot tell which), queueing,
# requests enough for p99, output length as sent against what was asked, run length and
# warm-up. A check whose input the files do not hold is "not evaluable", never passed.

# %% tags=["parameters"]
run_id: str = "2024-b300"  # folder under data/
data_root: str = "data"  # folder that holds the runs' inputs
report_root: str = "report"  # folder the report is written to
notebook: str = "15-points.ipynb"  # this notebook's name, stamped on its figures

# %%
from benchreport.analyses.campaign import definitions_table, point_figures
from benchreport.analyses.curves import (
    campaign_figures,
    campaign_workloads,
    tables,
    validity_figures,
    validity_table,
)
from benchreport.analyses.notebook import Collector, load_run, run_yaml_source
from benchreport.analyses.pointlog import point_log_figures
from benchreport.core.tables import load_ingested

run = load_run(run_id, data_root, report_root)
ing = load_ingested(run)
figs = Collector(run, notebook)
table, figures = point_figures(run, ing)
figs.add(figures)
table

# %% [markdown]
# Each client's definition of each latency it reports (a client the user declared in
# run.yaml is named as declared there, with the user's own definitions):

# %%
definitions_table(ing, run)

# %% [markdown]
# The validity of every point: its verdict, what the checks found, which could not run for
# want of an input (and what they lacked), and which passed.

# %%
validity, checked = validity_figures(run, ing)
figs.add(checked)
validity_table(validity)

# %% [markdown]
# The campaign (empty for a run whose workloads each have one point per engine).

# %%
campaign = campaign_figures(run, campaign_workloads(ing), run_yaml_source(run), validity)
figs.add(campaign.figures)
shown = tables(campaign)

# %% [markdown]
# Each series at each load: the mean over valid repeats, with n and the 95% interval.

# %%
shown["curves"]

# %% [markdown]
# Knee, SLO capacity and cost at capacity per series; engine comparisons per load.

# %%
shown["series"]

# %%
shown["compare"]

# %% [markdown]
# What each engine's log says for each point placed in it (a window of its own): the
# server's generation throughput, the accepted length of speculative decoding and the
# prefix-cache hits, each on the engine's own basis (see the figures' methods).

# %%
figs.add(point_log_figures(run, ing))

# %%
figs.save()
