# %% [markdown]
# # What the published text says, checked

# %% tags=["parameters"]
run_id: str = "2024-b300"  # folder under data/
data_root: str = "data"  # folder that holds the runs' inputs
report_root: str = "report"  # folder the report is written to
notebook: str = "80-claims.ipynb"  # this notebook's name, stamped on its figures

# %%
from benchreport.analyses.notebook import Collector, claim_check, load_run, save_claims

run = load_run(run_id, data_root, report_root)
figs = Collector(run, notebook)

# %% [markdown]
# Each claim of data/<run>/claims.yaml against the recomputed figures: published value,
# recomputed value, the tolerance its rounding allows, and a verdict: confirmed, consistent
# with the data (a causal claim the data agree with), indistinguishable (outside the rounding
# but below a stated noise floor: the figure's own interval of repeats, else the floor the
# claim declares in claims.yaml), differs, different method, contradicted by the data, or
# not derivable. For a reconstruction, a claim whose figures rest on what the
# generator was calibrated to agrees by construction; the "calibrated" column says so.

# %%
check = claim_check(run)
check.table

# %%
figs.add(check.figures)

# %%
save_claims(run, check)
figs.save()
