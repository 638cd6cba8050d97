"""Every figure of the reference run explains down to raw inputs: a file with its sha256
and a line range or JSON key, directly or through the figures it is computed from. A
figure that says something is absent cites the stretch that was searched."""

import json


def _grounded(figs: dict, fid: str, seen: frozenset = frozenset()) -> bool:
    f = figs.get(fid)
    if f is None:
        return False
    if any(s.get("sha256") and (s.get("lines") or s.get("key")) for s in f["sources"]):
        return True
    deps = [d for d in f["depends_on"] if d not in seen]
    return bool(deps) and all(_grounded(figs, d, seen | {fid}) for d in deps)


def test_every_figure_explains_down_to_raw_inputs(reference_build):
    run = reference_build
    figs = {f["id"]: f for f in
            json.loads(run.paths.figures_json.read_text(encoding="utf-8"))["figures"]}
    loose = sorted(k for k in figs if not _grounded(figs, k))
    assert not loose, loose
    # absence cites the searched range: the 200K window of vLLM's log has no OOM retry
    zero = figs["events.200k.vllm.oom_retries"]
    assert zero["value"] == 0
    (src,) = zero["sources"]
    assert src["path"].endswith("vllm/server.log") and len(src["lines"]) == 2
    assert src["lines"][0] < src["lines"][1]
    assert f"none in lines {src['lines'][0]}–{src['lines'][1]}" in zero["method"]
    # a setting that is not logged cites the whole log it looked in
    ver = figs["setting.verification.vllm"]
    assert ver["value"] == "default" and ver["sources"][0]["lines"][0] == 1
