"""Issue 30: a cluster engine reads the store as it is. Apache Spark (pyspark, local mode)
reads the runs' own partitions and the compacted set, applies the store's one rule (a run's
own partition supersedes its compacted rows) and gets the same rows as DuckDB through
benchreport. Optional: it skips, saying why, without Java or pyspark (``.ci/run`` installs
both: Debian's headless JRE and ``requirements-spark.lock``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchreport.core.store import compacted_file, listing, run_query
from benchreport.pipeline.compact import compact
from benchreport.pipeline.store import export_run

from .test_store_atomic import _as_build

COLUMNS = "run_id, point, engine, workload, load, repeat, p99_ttft_ms, mean_e2el_ms, sha256"


@pytest.fixture(scope="module")
def spark():
    """A local Spark session; a skip, saying what is missing, before anything is built.
    Stopped with the module: stopping the JVM takes seconds of waiting, which at the end of
    the session were the last seconds of the suite. PySpark sets environment variables and
    adds to ``sys.path`` for the life of the process; both are put back as they were, since
    the kept notebook workers serve only builds in the environment they started in (a
    changed one started new workers and kernels for every later build of this process)."""
    if shutil.which("java") is None:
        pytest.skip("Java is not installed: the Spark test needs a JRE "
                    "(apt-get install default-jre-headless; .ci/run does it)")
    with _as_it_was():
        pyspark = pytest.importorskip(
            "pyspark", reason="pyspark is not installed: pip install -r "
                              "requirements-spark.lock (.ci/run does it)")
        from pyspark.sql import SparkSession

        del pyspark
        session = (SparkSession.builder.master("local[1]").appName("benchreport-store")
                   .config("spark.ui.enabled", "false")
                   .config("spark.sql.shuffle.partitions", "1")
                   # a JVM that lives seconds: the quick compiler only, one collector
                   # thread (its start took 10 s of CPU, now 6)
                   .config("spark.driver.extraJavaOptions",
                           "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
                   # run ids such as 2025-05-01 stay text, as hive_types does for DuckDB
                   .config("spark.sql.sources.partitionColumnTypeInference.enabled",
                           "false")
                   .getOrCreate())
        yield session
        session.stop()


@contextlib.contextmanager
def _as_it_was() -> Iterator[None]:
    """``os.environ`` and ``sys.path`` put back, when the block ends, as they were when it
    began."""
    environ, path = dict(os.environ), list(sys.path)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(environ)
        sys.path[:] = path


def test_spark_reads_the_store_as_it_is_and_gets_duckdbs_rows(spark, reference_build,
                                                              tmp_path):
    store = tmp_path / "_store"
    for run_id in ("run-a", "run-b"):
        export_run(_as_build(reference_build, tmp_path / run_id, run_id), store)
    compact(store)
    # since the compaction: a new run, and run-a exported again (it supersedes)
    export_run(_as_build(reference_build, tmp_path / "c", "run-c"), store)
    export_run(_as_build(reference_build, tmp_path / "a2", "run-a", mark="again-"), store)
    assert listing(store).own == {"run-a", "run-c"}

    spark.read.parquet(str(store / "points")).createOrReplaceTempView("own")
    spark.read.parquet(str(compacted_file(store, "points").parent)) \
        .createOrReplaceTempView("compacted")
    spark.read.parquet(str(store / "runs")).createOrReplaceTempView("own_runs")
    sql = (f"SELECT {COLUMNS} FROM own UNION ALL SELECT {COLUMNS} FROM compacted "
           "WHERE run_id NOT IN (SELECT run_id FROM own_runs) ORDER BY run_id, point")
    got = [tuple(r) for r in spark.sql(sql).collect()]
    _, want = run_query(store, f"SELECT {COLUMNS} FROM points ORDER BY run_id, point")
    assert got == want
    assert sorted({r[0] for r in got}) == ["run-a", "run-b", "run-c"] and len(got) == 12
    # run-a's rows are its later build's (another checksum), not the compacted ones
    assert all(r[-1].startswith("again-") for r in got if r[0] == "run-a")
    assert not any(r[-1].startswith("again-") for r in got if r[0] != "run-a")


def test_the_spark_extra_is_pinned(project: Path):
    """CI installs exactly what the lock names; pyproject names the extra."""
    lock = (project / "requirements-spark.lock").read_text().split()
    assert any(line.startswith("pyspark==") for line in lock)
    assert any(line.startswith("py4j==") for line in lock)
    assert 'spark = ["pyspark"]' in (project / "pyproject.toml").read_text()
    assert "requirements-spark.lock" in (project / ".ci" / "run").read_text()
