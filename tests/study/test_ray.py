"""Sweeps on Ray (issue 17): a small study run as Ray tasks on a local Ray instance gives
the table of a plain run; without Ray, --ray fails with exit 2 and says how to install it."""
from __future__ import annotations

import builtins
import os

import pytest
from typer.testing import CliRunner

from jaxmedusa.study import run_study

from sweep_helpers import rows_equal, small_offset, study, table, write_study


def test_ray_missing_is_a_clear_error(tmp_path, monkeypatch):
    real = builtins.__import__

    def no_ray(name, *a, **kw):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    from jaxmedusa_cli.app import app

    res = CliRunner().invoke(app, ["sweep", str(write_study(tmp_path)), "--ray", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    assert "pip install 'jaxmedusa[ray]'" in res.output and "Traceback" not in res.output


def test_local_ray_gives_the_plain_table(tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is the optional extra jaxmedusa[ray] (CI installs it)")
    from jaxmedusa.study.ray_backend import run_study_ray

    import jax

    st = study(small_offset(n=4))  # 2 chunks of 2: two Ray tasks
    # the worker loads what this process compiles (run_study_ray passes the cache folder on)
    old = (jax.config.jax_compilation_cache_dir, jax.config.jax_persistent_cache_min_compile_time_secs)
    jax.config.update("jax_compilation_cache_dir", str(tmp_path / "jax-cache"))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    try:
        plain = run_study(st, out=tmp_path / "plain", progress=False)
        assert plain.complete
        # one worker CPU (both tasks in one worker process), a small object store, no dashboard
        s = run_study_ray(st, out=tmp_path / "ray", progress=False,
                          init_kwargs=dict(num_cpus=1, object_store_memory=80 * 1024**2))
    finally:
        jax.config.update("jax_compilation_cache_dir", old[0])
        jax.config.update("jax_persistent_cache_min_compile_time_secs", old[1])
        from jax._src import compilation_cache  # the cache binds its folder once: unbind it for later tests

        compilation_cache.reset_cache()
    assert not ray.is_initialized()  # the call started Ray, so it stopped it
    assert s.complete and sorted(s.chunks_run) == [0, 1]
    a, b = table(tmp_path / "ray"), table(tmp_path / "plain")
    assert rows_equal(a, b)  # the same chunks, run by Ray workers: bit-identical rows
    meta = {k.decode(): v.decode() for k, v in a.schema.metadata.items()}
    assert meta["jaxmedusa.fingerprint"] == {k.decode(): v.decode() for k, v in b.schema.metadata.items()}[
        "jaxmedusa.fingerprint"]
    # --resume of a complete Ray output runs nothing (the same chunk store as a local run)
    again = run_study(st, out=tmp_path / "ray", resume=True, progress=False)
    assert again.chunks_run == [] and again.chunks_skipped == [0, 1] and rows_equal(table(tmp_path / "ray"), b)
    assert os.environ.get("RAY_ADDRESS") is None


@pytest.mark.slow  # starts three Ray nodes (~1 min on 2 cores); run with -m slow
def test_cluster_at_an_address_with_several_nodes(tmp_path):
    """The --address path on a real multi-node Ray cluster (three raylets on this machine,
    ray.cluster_utils): the head has no CPU, so every chunk must run on a worker node and
    reach the driver through the shared folder; the table equals a plain run's."""
    ray = pytest.importorskip("ray", reason="Ray is the optional extra jaxmedusa[ray]")
    from ray.cluster_utils import Cluster

    from jaxmedusa.study.ray_backend import run_study_ray

    st = study(small_offset(n=4))  # 2 chunks of 2
    plain = run_study(st, out=tmp_path / "plain", progress=False)
    cluster = Cluster(initialize_head=True, head_node_args=dict(num_cpus=0, include_dashboard=False,
                                                                object_store_memory=80 * 1024**2))
    try:
        for _ in range(2):
            cluster.add_node(num_cpus=1, object_store_memory=80 * 1024**2)
        cluster.wait_for_nodes()
        s = run_study_ray(st, out=tmp_path / "ray", progress=False, address=cluster.address)
        assert not ray.is_initialized()  # joined the cluster for the run, then left it
    finally:
        cluster.shutdown()
    assert plain.complete and s.complete and sorted(s.chunks_run) == [0, 1]
    assert rows_equal(table(tmp_path / "ray"), table(tmp_path / "plain"))
