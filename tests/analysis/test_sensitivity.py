"""Sensitivity statistics on analytic functions: DGSM from exact derivatives against the closed
form and against SALib's finite-difference DGSM; Sobol' and Morris through `analyse` against
closed-form indices. No simulation here (tests/study/test_gradients.py runs the simulator)."""
import math

import numpy as np
import pyarrow as pa
import pytest
from SALib.analyze import dgsm as salib_dgsm
from SALib.sample import finite_diff

from jaxmedusa.analysis.sensitivity import analyse, dgsm_from_gradients, salib_design, salib_problem
from jaxmedusa.core.scenario import Scenario
from jaxmedusa.study.spec import Distribution, Parameter, Sampler, Study, StudyError, Target

A, B = 2.0, 3.0  # f = A x1 + B x2^2 + 0 x3 on the unit cube


def f(x):
    return A * x[:, 0] + B * x[:, 1] ** 2


def dfdx(x):
    return np.column_stack([np.full(len(x), A), 2.0 * B * x[:, 1], np.zeros(len(x))])


def _study(kinds=("uniform",) * 3):
    params = []
    for i, k in enumerate(kinds):
        args = {"uniform": (0.0, 1.0), "normal": (0.5, 0.1), "choice": (0.0, 1.0)}[k]
        params.append(Parameter(name=f"x{i + 1}", dist=Distribution(k, args), mode="set",
                                targets=((Target(f"vehicles.1.x", "vehicle", (0,), "x"), 1.0),)))
    return Study(name="analytic", base=Scenario(name="s", models=[], vehicles=[]), settings=None,
                 parameters=params, sampler=Sampler(), source="analytic.toml")


def _table(x, y, grads=None):
    cols = {"sample_id": pa.array(np.arange(len(y))), **{f"x{i + 1}": pa.array(x[:, i]) for i in range(3)},
            "v1_out": pa.array(y)}
    for k, g in (grads or {}).items():
        cols[k] = pa.array(g)
    return pa.table(cols)


# closed form on U[0,1]^3: Var f = A^2/12 + B^2 (1/5 - 1/9); nu_1 = A^2, nu_2 = E[(2 B x2)^2] = 4 B^2 / 3
VAR = A**2 / 12 + B**2 * (1 / 5 - 1 / 9)
NU = np.array([A**2, 4 * B**2 / 3, 0.0])
DGSM = NU / (math.pi**2 * VAR)
ST = np.array([A**2 / 12, B**2 * (1 / 5 - 1 / 9), 0.0]) / VAR  # additive: ST = S1


def test_dgsm_exact_derivatives_match_closed_form_and_salib():
    n = 2048
    study = _study()
    x = salib_design(study, "dgsm", n, seed=1)
    nu, nu_c, dg, dg_c = dgsm_from_gradients(f(x), dfdx(x), salib_problem(study, "dgsm")["bounds"])
    # Sobol' points: the sample means are within a few CLT half-widths of the truth
    # (the half-width is itself an over-estimate for QMC points)
    assert np.all(np.abs(nu - NU) <= 2 * nu_c + 1e-12)
    assert np.all(np.abs(dg - DGSM) <= 2 * dg_c + 0.02 * DGSM)  # + 2 %: Var f is estimated too
    assert np.all(ST <= dg + 1e-12)  # Sobol' & Kucherenko: ST_i <= dgsm_i for uniform inputs
    # SALib's DGSM from one-sided differences (step 1e-3 of the range) on its own design
    problem = {"num_vars": 3, "names": ["x1", "x2", "x3"], "bounds": [[0.0, 1.0]] * 3}
    xs = finite_diff.sample(problem, n, delta=1e-3, seed=1)
    s = salib_dgsm.analyze(problem, xs, f(xs), seed=1)
    # one-sided difference of x2^2 is biased by B*delta per unit: relative 1e-3; sampling
    # differs between the two designs by a few percent of nu at n = 2048
    assert np.allclose(s["dgsm"], dg, rtol=0.05, atol=1e-9)
    assert np.allclose(s["vi"], nu, rtol=0.05, atol=1e-9)


def test_analyse_sobol_and_morris_recover_closed_form():
    study = _study()
    x = salib_design(study, "sobol", 1024, seed=2)
    t = analyse(study, "sobol", _table(x, f(x)), seed=2).to_pandas()
    st = t[t["index"] == "ST"].set_index("parameter")["value"]
    conf = t[t["index"] == "ST"].set_index("parameter")["conf"]
    # Saltelli-Jansen estimators at N = 1024: within 3 bootstrap half-widths + 0.02 (the
    # interval itself is a bootstrap estimate)
    assert np.all(np.abs(st.loc[["x1", "x2", "x3"]].to_numpy() - ST) <= 3 * conf.loc[["x1", "x2", "x3"]] + 0.02)
    assert set(t["index"]) == {"S1", "ST", "S2"} and set(t.columns) == {"output", "parameter", "method", "index",
                                                                       "value", "conf"}
    assert (t[t["index"] == "S2"]["parameter"] == ["x1:x2", "x1:x3", "x2:x3"]).all()

    xm = salib_design(study, "morris", 64, seed=3)
    tm = analyse(study, "morris", _table(xm, f(xm)), seed=3).to_pandas()
    mu = tm[tm["index"] == "mu_star"].set_index("parameter")["value"]
    # elementary effects: x1 linear -> exactly A; x3 absent -> exactly 0 (round-off only)
    assert mu["x1"] == pytest.approx(A, rel=1e-9) and mu["x3"] == pytest.approx(0.0, abs=1e-9)
    # x2: the effect of a step x -> x + delta (delta = 2/3 on the 4-level grid) is
    # B ((x + delta)^2 - x^2) / delta = B (2 x + delta), x the lower end of the step
    traj = xm.reshape(64, 4, 3)
    lows = [min(t[k, 1], t[k + 1, 1]) for t in traj for k in range(3) if t[k, 1] != t[k + 1, 1]]
    assert len(lows) == 64
    assert mu["x2"] == pytest.approx(np.mean([B * (2 * lo + 2 / 3) for lo in lows]), rel=1e-9)


def test_distributions_the_methods_cannot_take_are_rejected_by_name():
    with pytest.raises(StudyError, match=r"parameters\.x2.*normal.*--method morris"):
        salib_problem(_study(("uniform", "normal", "uniform")), "morris")
    with pytest.raises(StudyError, match=r"parameters\.x3.*choice"):
        salib_problem(_study(("uniform", "uniform", "choice")), "sobol")
    p = salib_problem(_study(("uniform", "normal", "uniform")), "sobol")  # sobol takes normal via SALib dists
    assert p["dists"] == ["unif", "norm", "unif"] and p["bounds"][1] == [0.5, 0.1]
