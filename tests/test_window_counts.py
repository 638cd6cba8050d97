

@needs_sample
def test_find_windows_places_a_declared_clients_points_by_count(tmp_path):
    from benchreport.ingest.windows import find_windows

    name = "raw/vllm/vllm-int4.log"
    (tmp_path / "raw/vllm").mkdir(parents=True)
    shutil.copyfile(SAMPLE / "vllm-int4.log", tmp_path / name)
    by_kind: dict[str, list] = {}
    for r in read_raw(tmp_path / name, name, "auto", 2026):
        by_kind.setdefault(r["kind"], []).append({**r, "engine": "vllm", "file": name})
    entries = _entries("vllm", "ergebnisse.json")
    for e in entries:                       # one workload each: every point is single
        e.workload = e.id.split(".", 1)[1]
        e.point.model = None
        e.load = SimpleNamespace(max_concurrency=None)
    run = SimpleNamespace(paths=SimpleNamespace(root=tmp_path), meta=SimpleNamespace(
        engines=[SimpleNamespace(id="vllm")], windows={},
        workloads=[SimpleNamespace(id=e.workload, is_sweep=False) for e in entries]))
    assert find_windows(run, by_kind, entries, []) == []      # no declared client: as before
    notes: list[str] = []
    windows = find_windows(run, by_kind, entries, notes, warmup=1)
    assert len(windows) == 14 and {w.method for w in windows} == {"request count"}
    first = next(w for w in windows if w.workload == "prosa_decode.c1")
    assert (first.start, first.end, first.first_line, first.last_line) == (
        "2026-08-01T23:30:44", "2026-08-01T23:31:30", 163, 174)
    assert notes == [f"{name}: 3 client requests after the last benchmark's, which no result "
                     "records: line 327 (400), line 328 (400), line 329 (400)"]
