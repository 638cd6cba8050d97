# %% [markdown]
# # Speculative decoding and caches

# %% tags=["parameters"]
run_id: str = "2024-b300"  # folder under data/
data_root: str = "data"  # folder that holds the runs' inputs
report_root: str = "report"  # folder the report is written to
notebook: str = "50-spec.ipynb"  # this notebook's name, stamped on its figures

# %%
from benchreport.analyses.cache import cache_figures
from benchreport.analyses.notebook import Collector, load_run
from benchreport.analyses.spec import spec_figures
from benchreport.core.tables import load_ingested

run = load_run(run_id, data_root, report_root)
figs = Collector(run, notebook)

# %% [markdown]
# Drafted and accepted tokens, mean accepted length and per-position acceptance, per engine
# and input length. Both engines count the bonus token in their accepted length, so 1.00
# means no draft token was accepted. A random dataset is close to unpredictable, so its
# acceptance says little about real traffic.

# %%
ing = load_ingested(run)
figs.add(spec_figures(run, ing))

# %% [markdown]
# Prefix-cache hit rate and peak KV-cache usage per engine and workload window. The engines
# report different quantities: SGLang the prompt tokens found in the cache per admitted batch
# (exact for the window), vLLM a rolling rate over its most recent ~1000 requests.

# %%
figs.add(cache_figures(run, ing))

# %%
figs.save()
