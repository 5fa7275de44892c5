"""study/loop_choice.py: which form of the time loop a study's chunks compile, and how a study
file names it."""
from __future__ import annotations

import dataclasses

import pytest
from typer.testing import CliRunner

from jaxmedusa.core.params import Settings
from jaxmedusa.study import load_study
from jaxmedusa.study.design import design
from jaxmedusa.study.loop_choice import DISPATCHED_MAX_PAIR_STEPS, time_loop_for
from jaxmedusa.study.perturb import scenarios_for
from jaxmedusa.study.runner import plan_sweep

from sweep_helpers import STUDIES, offset_text, small_offset, study

OFFSET = Settings(end_time=3.0, dt=4e-4, contact_law="crush", contact_geometry="superellipsoid", step_control="constant")


def test_auto_dispatches_small_contact_studies_on_a_cpu_only():
    # the offset study: 3 s / 4e-4 s = 7,500 steps of one pair a scenario
    steps = 3.0 / 4e-4
    small = int(DISPATCHED_MAX_PAIR_STEPS // steps)  # the largest study still dispatched
    assert time_loop_for("auto", OFFSET, 256, 2, "cpu") == "dispatched"  # 1.9e6 pair-steps
    assert time_loop_for("auto", OFFSET, small, 2, "cpu") == "dispatched"
    assert time_loop_for("auto", OFFSET, small + 1, 2, "cpu") == "whole"
    assert time_loop_for("auto", OFFSET, 4096, 2, "cpu") == "whole"  # 3.1e7
    # three vehicles: three pairs a step, so a third of the scenarios
    assert time_loop_for("auto", OFFSET, small // 3, 3, "cpu") == "dispatched"
    assert time_loop_for("auto", OFFSET, small // 3 + 1, 3, "cpu") == "whole"
    assert time_loop_for("auto", OFFSET, 256, 2, "gpu") == "whole"
    assert time_loop_for("auto", dataclasses.replace(OFFSET, contact=False), 256, 2, "cpu") == "whole"
    assert time_loop_for("auto", OFFSET, 256, 1, "cpu") == "whole"  # one vehicle: no contact stage
    medusa = dataclasses.replace(OFFSET, contact_law="medusa", contact_geometry="medusa_search")
    assert time_loop_for("auto", medusa, 4, 2, "cpu") == "whole"  # its own search keeps the thunk runtime
    for given in ("whole", "dispatched"):  # a study that names its form gets it
        assert time_loop_for(given, OFFSET, 256, 2, "gpu") == given
        assert time_loop_for(given, OFFSET, 10**6, 2, "cpu") == given


def test_the_plan_and_the_tables_name_the_form():
    offset = load_study(STUDIES / "offset.toml")
    assert offset.time_loop == "auto"
    assert plan_sweep(offset, workers=2, backend="cpu").meta["jaxmedusa.time_loop"] == "whole"  # 4096
    small = dataclasses.replace(offset, sampler=dataclasses.replace(offset.sampler, n=256))
    plan = plan_sweep(small, workers=2, backend="cpu")
    assert plan.time_loop == plan.meta["jaxmedusa.time_loop"] == "dispatched"
    assert plan_sweep(small, workers=2, backend="gpu").time_loop == "whole"


def test_auto_keeps_the_fingerprint_and_a_named_form_changes_it():
    data = small_offset()
    auto = study(data)
    assert "time_loop" not in auto.spec() and "time_loop" not in auto.spec()["settings"]
    named = study({**data, "simulation": {**data["simulation"], "time_loop": "whole"}})
    assert named.time_loop == "whole" and named.fingerprint(2) != auto.fingerprint(2)


def test_an_unknown_form_is_refused_naming_file_and_key(tmp_path):
    from jaxmedusa_cli.app import app
    path = tmp_path / "bad.toml"
    path.write_text(offset_text(name="bad").replace("[sampler]", 'time_loop = "fast"\n\n[sampler]', 1))
    res = CliRunner().invoke(app, ["sweep", str(path), "--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 2, res.output
    assert str(path) in res.output and "simulation.time_loop" in res.output and "'fast'" in res.output


def test_the_chunks_run_the_plans_form(monkeypatch):
    """run_chunk hands the plan's form to the solver's settings (the solver's own test,
    tests/solver/test_time_loop.py, shows what each form compiles to)."""
    from jaxmedusa.study import runner

    class Seen(Exception):
        pass

    def record(batch, state, settings, *args, **kwargs):
        raise Seen(settings.time_loop)

    monkeypatch.setattr(runner, "simulate_sliced", record)
    s = study(small_offset(n=2))
    ids, cols = design(s)
    items = scenarios_for(s, {c: v[:1] for c, v in cols.items()}, ids[:1])
    for given, expected in (("dispatched", "dispatched"), (None, "whole")):
        with pytest.raises(Seen, match=expected):
            runner.run_chunk(s, items, 1, time_loop=given)
