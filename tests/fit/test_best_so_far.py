"""What a Ctrl-C during `jaxmedusa fit` keeps: the best evaluated point so far (cli/fit_commands.py)."""
from __future__ import annotations

import json

import numpy as np

from jaxmedusa.fit import FitProblem, load_fit
from jaxmedusa_cli.fit_commands import BestSoFar

from helpers import ROOT


def test_best_so_far_keeps_the_lowest_cost_and_writes_its_unknowns(tmp_path):
    problem = FitProblem(load_fit(ROOT / "studies" / "fit_offset.toml"))
    n = problem.n_unknowns
    best = BestSoFar(problem)
    assert best.write(tmp_path) is None  # nothing evaluated yet: nothing written
    z_good, z_bad = np.linspace(-0.5, 0.5, n), np.full(n, 2.0)
    for cost, z in [(9.0, z_bad), (1.5, z_good), (4.0, z_bad)]:
        best.update(cost, z)
    data = json.loads(best.write(tmp_path).read_text())
    assert data["chi2"] == 1.5 and data["evaluations"] == 3
    # the host mapping is the solver's own z -> x (1e-12: the same sigmoid in numpy and XLA)
    expect = np.asarray(problem.to_x(z_good))
    got = np.array([data["unknowns"][u.name] for u in problem.spec.unknowns])
    np.testing.assert_allclose(got, expect, rtol=1e-12, atol=1e-12)
