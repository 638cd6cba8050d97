# %% [markdown]
# # Ingest: every raw file, read and accounted for
# Each server log, launch configuration and benchmark result of the run is read by the
# package's parsers. Nothing is dropped silently: every file reports how many lines it has,
# how many records of each kind it yielded and how many lines it could not read. The tidy
# tables (one row per record, with file and line) are written to `derived/tables/`.

# %% tags=["parameters"]
run_id: str = "2024-b300"  # folder under data/
data_root: str = "data"  # folder that holds the runs' inputs
report_root: str = "report"  # folder the report is written to
notebook: str = "05-ingest.ipynb"  # this notebook's name

# %%
from benchreport.ingest.io import load_run
from benchreport.ingest.run import check_windows, ingest_run, save_ingest

run = load_run(run_id, data_root, report_root)
ing = ingest_run(run)

# %% [markdown]
# What each file yielded (lines read, records per kind, lines not recognised):

# %%
import pandas as pd

pd.DataFrame([{"file": s["file"], "engine": s["engine"], "lines": s["lines"],
               "unrecognised": s["unrecognised"], "records": s["counts"]} for s in ing.summaries])

# %% [markdown]
# Warnings (a recognisable line with a field that could not be read):

# %%
[w for s in ing.summaries for w in s["warnings"]]

# %% [markdown]
# Where each benchmark sits in its engine's log, and how that span was found:

# %%
pd.DataFrame([w.__dict__ for w in ing.windows])

# %%
check_windows(run, ing)
save_ingest(run, ing)
