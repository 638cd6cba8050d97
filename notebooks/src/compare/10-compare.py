# %% [markdown]
# # Comparison across runs
# Runs read from the results store (`report/_store/`, written by each run's build): what
# differs between the base run and each other run (hardware, model, each engine's release
# and launch settings, client, workloads), and, for every point the runs share (the same
# engine, model and load, input and output lengths within a tolerance, whatever the
# workloads are called), each metric's change as a ratio with its interval and a verdict
# (the gate's own, `analyses.gate.judge`). No interval, no verdict: a change inside the
# noise is not called an improvement or a regression. Each run's load curve per engine and
# workload; with three or more runs, each metric over the runs in date order.

# %% tags=["parameters"]
runs: str = "2024-b300 2024-b300-vllm-whatif"  # run ids, separated by spaces
base: str = ""  # the run the others are compared with (default: the first)
out: str = "report/_compare/2024-b300-vs-2024-b300-vllm-whatif"  # where it is written
store: str = "report/_store"  # the results store (--store, $BENCHREPORT_STORE)
data_root: str = "data"  # folder holding the runs' inputs (run.yaml's gate: noise floors)
notebook: str = "10-compare.ipynb"  # this notebook's name, stamped on its figures

# %%
from benchreport.analyses.compare import tables
from benchreport.analyses.notebook import CompareCollector, compare, save_compare

figs = CompareCollector(out, notebook)
comp = compare(store, runs, base, data_root)
figs.add(comp.figures)
shown = tables(comp)
shown["changes"]

# %% [markdown]
# Every metric of every matched point: base and other value, ratio (other ÷ base) with its
# interval, and the verdict.

# %%
shown["matched"]

# %% [markdown]
# Points present in only one of two compared runs, and why they matched none of the other's:

# %%
shown["only"]

# %%
save_compare(figs, comp)
figs.save()
