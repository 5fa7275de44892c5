"""Global sensitivity analysis of a study: SALib designs and analyses, and DGSM from exact derivatives.

    from jaxmedusa.analysis.sensitivity import sensitivity_study, analyse
    sstudy = sensitivity_study(study, "sobol", n=64)        # the study with SALib's design
    run_study(sstudy, out="results/offset_sobol")          # the normal sweep machinery
    table = analyse(sstudy, "sobol", scenarios_table)      # -> one row per (output, parameter, index)

Methods (SALib, Herman & Usher 2017):
- "sobol": Saltelli's extension of Sobol' sampling (SALib.sample.sobol, N * (2D + 2) runs
  with second-order indices; N a power of 2) and SALib.analyze.sobol: S1, ST, S2 with
  bootstrap confidence intervals.
- "morris": N Morris trajectories on a 4-level grid (N * (D + 1) runs) and
  SALib.analyze.morris: mu, mu_star, sigma (mu_star with a bootstrap interval).
- "dgsm": N points of a scrambled Sobol' sequence, each run with forward-mode derivatives
  of every output with respect to every parameter (study/gradients.py; no finite
  differences), and the derivative-based measure of Sobol' & Kucherenko (2009):
      nu_i = E[(df/dx_i)^2],   dgsm_i = nu_i (b_i - a_i)^2 / (pi^2 Var f)
  which bounds the total Sobol' index from above for a uniform x_i on [a_i, b_i]
  (ST_i <= dgsm_i). Its interval is the normal one, 1.96 sd(( df/dx_i)^2 (b-a)^2 /
  (pi^2 Var f)) / sqrt(N) (Var f held at its estimate).

Distributions: uniform ranges map to SALib bounds directly. normal and truncnormal are
passed to SALib as its "norm"/"truncnorm" distributions for Sobol' (variance-based
indices hold for any independent inputs); Morris' grid and DGSM's Poincare constant
(b - a)^2 / pi^2 assume uniform inputs, so those methods reject them. choice and fixed
value lists have no continuous range: rejected (StudyError naming the parameter).

Result table columns: output, parameter (S2: "a:b"), method, index (S1, ST, S2, mu,
mu_star, sigma, nu, dgsm), value, conf (95 % half-width; NaN where SALib gives none).
Outputs analysed: `[outputs] sensitivity` of the study, else every numeric per-vehicle
metric column that is finite in every row and varies.
"""
from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pyarrow as pa

from jaxmedusa.study.gradients import GRADIENT_METRICS, gradient_column, output_columns
from jaxmedusa.study.spec import ExplicitDesign, Study, StudyError

__all__ = ["METHODS", "salib_problem", "salib_design", "sensitivity_study", "analyse", "dgsm_from_gradients",
           "sensitivity_outputs", "RESULT_COLUMNS"]

METHODS = ("sobol", "morris", "dgsm")
RESULT_COLUMNS = ("output", "parameter", "method", "index", "value", "conf")
CONF_LEVEL = 0.95
MORRIS_LEVELS = 4  # SALib's default grid: 4 levels, step 2/3 of the range


def salib_problem(study: Study, method: str) -> dict:
    """The SALib problem dict of a study's parameters; StudyError naming a parameter whose
    distribution the method cannot take (module docstring)."""
    if method not in METHODS:
        raise StudyError(f"--method: one of {', '.join(METHODS)} expected, got {method!r}")
    names, bounds, dists = [], [], []
    for p in study.parameters:
        d = p.dist
        where = f"{study.source}: parameters.{p.name}"
        if d.kind == "uniform":
            names.append(p.name), bounds.append(list(d.args)), dists.append("unif")
        elif d.kind in ("normal", "truncnormal") and method == "sobol":
            names.append(p.name)
            if d.kind == "normal":
                bounds.append([d.args[0], d.args[1]]), dists.append("norm")
            else:  # SALib truncnorm: [lower, upper, mean, std]
                bounds.append([d.args[2], d.args[3], d.args[0], d.args[1]]), dists.append("truncnorm")
        elif d.kind in ("normal", "truncnormal"):
            raise StudyError(f"{where}: a {d.kind} distribution; --method {method} needs uniform ranges "
                             "(Morris' grid and DGSM's (b - a)^2/pi^2 scaling); use --method sobol or a uniform range")
        else:
            raise StudyError(f"{where}: a {d.kind} list has no continuous range; sensitivity analysis needs "
                             "uniform (or, for sobol, normal/truncnormal) distributions: make one study per value")
    return {"num_vars": len(names), "names": names, "bounds": bounds, "dists": dists}


def salib_design(study: Study, method: str, n: int, seed: int = 0) -> np.ndarray:
    """The (rows, D) design matrix of `method` with base size n (module docstring)."""
    problem = salib_problem(study, method)
    if method == "sobol":
        from SALib.sample import sobol as sobol_sample

        if n & (n - 1):
            raise StudyError(f"--n: Sobol' sampling needs a power of 2, got {n}")
        return sobol_sample.sample(problem, n, calc_second_order=True, scramble=True, seed=seed)
    if method == "morris":
        from SALib.sample import morris as morris_sample

        return morris_sample.sample(problem, n, num_levels=MORRIS_LEVELS, seed=seed)
    from scipy.stats import qmc  # dgsm: base points only; derivatives come from forward mode

    u = qmc.Sobol(problem["num_vars"], scramble=True, seed=seed).random(n)
    lo, hi = (np.array([b[i] for b in problem["bounds"]]) for i in (0, 1))
    return lo + u * (hi - lo)


def sensitivity_study(study: Study, method: str, n: int, seed: int = 0) -> Study:
    """The study with SALib's design as its explicit design (spec.ExplicitDesign), renamed
    <name>-<method>; for "dgsm" with gradient columns of every output (module docstring)
    with respect to every parameter. Runs through study.runner.run_study like any study."""
    x = salib_design(study, method, n, seed)
    names = [p.name for p in study.parameters]
    design = ExplicitDesign(label=f"salib-{method} n={n} seed={seed}",
                            columns={k: x[:, j].copy() for j, k in enumerate(names)})
    outputs = study.outputs
    if method == "dgsm":
        of = sensitivity_outputs(study, None, for_gradients=True)
        outputs = dataclasses.replace(outputs, gradients_of=tuple(of), gradients_wrt=tuple(names))
    return dataclasses.replace(study, name=f"{study.name}-{method}", explicit=design, outputs=outputs)


def sensitivity_outputs(study: Study, table: pa.Table | None, for_gradients: bool = False) -> list[str]:
    """Output columns to analyse: the study's `[outputs] sensitivity`, else every numeric
    per-vehicle metric column of the table that is finite in every row and varies (before a
    run, for_gradients: every differentiable column of the study's metrics)."""
    listed = list(study.outputs.sensitivity)
    diff = output_columns(study.n_vehicles)
    if for_gradients:
        if listed:
            bad = [c for c in listed if c not in diff]
            if bad:
                raise StudyError(f"{study.source}: outputs.sensitivity: {bad[0]!r} has no derivative (--method "
                                 f"dgsm); valid: {', '.join(diff)}")
            return listed
        return [c for c, (m, _, _) in diff.items() if m in study.outputs.metrics and m in GRADIENT_METRICS]
    if listed:
        bad = [c for c in listed if c not in table.column_names]
        if bad:
            raise StudyError(f"{study.source}: outputs.sensitivity: unknown column {bad[0]!r}; valid: "
                             f"{', '.join(c for c in table.column_names if c.startswith('v'))}")
        return listed
    out = []
    for c in table.column_names:
        if c in diff or (c.startswith("v") and c.split("_", 1)[0][1:].isdigit()):
            col = table.column(c)
            if col.null_count or not (pa.types.is_floating(col.type) or pa.types.is_integer(col.type)):
                continue
            y = np.asarray(col.to_numpy(), float)
            if np.all(np.isfinite(y)) and np.ptp(y) > 1e-12 * max(1.0, np.max(np.abs(y))):
                out.append(c)
    return out


def _rows(out: list, output: str, method: str, names, index: str, values, confs):
    for name, v, c in zip(names, values, confs):
        out.append((output, name, method, index, float(v), float(c) if c is not None else math.nan))


def dgsm_from_gradients(f, dfdx, bounds) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(nu, nu_conf, dgsm, dgsm_conf) per parameter from outputs f (N,) and exact derivatives
    dfdx (N, D) at uniform sample points; bounds (D, 2). Module docstring for the formulas."""
    f, dfdx = np.asarray(f, float), np.asarray(dfdx, float)
    n = len(f)
    z = 1.959963984540054  # the 97.5 % normal quantile
    g2 = dfdx**2
    nu = g2.mean(axis=0)
    nu_conf = z * g2.std(axis=0, ddof=1) / math.sqrt(n)
    width2 = np.array([(b[1] - b[0]) ** 2 for b in bounds])
    var = f.var()  # as SALib.analyze.dgsm (ddof 0)
    scale = width2 / (math.pi**2 * var) if var > 0 else np.full(len(width2), math.nan)
    return nu, nu_conf, nu * scale, nu_conf * scale


def analyse(study: Study, method: str, table: pa.Table, seed: int = 0) -> pa.Table:
    """The sensitivity table (module docstring) of a finished sensitivity run: `study` as
    sensitivity_study returned it, `table` its scenarios table (rows in sample-id order)."""
    problem = salib_problem(study, method)
    names = problem["names"]
    table = table.sort_by("sample_id")
    x = np.column_stack([table.column(k).to_numpy() for k in names])
    outputs = sensitivity_outputs(study, table)
    rows: list = []
    for out in outputs:
        col = table.column(out)
        y = np.asarray(col.to_numpy(zero_copy_only=False), float)
        if col.null_count or not np.all(np.isfinite(y)):
            raise StudyError(f"{out}: missing or non-finite values in {col.null_count or int((~np.isfinite(y)).sum())}"
                             " rows (failed scenarios or no contact): leave it out of outputs.sensitivity")
        if method == "sobol":
            from SALib.analyze import sobol

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # constant outputs: 0/0 indices
                s = sobol.analyze(problem, y, calc_second_order=True, conf_level=CONF_LEVEL, seed=seed)
            _rows(rows, out, method, names, "S1", s["S1"], s["S1_conf"])
            _rows(rows, out, method, names, "ST", s["ST"], s["ST_conf"])
            pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
            _rows(rows, out, method, [f"{names[i]}:{names[j]}" for i, j in pairs], "S2",
                  [s["S2"][i, j] for i, j in pairs], [s["S2_conf"][i, j] for i, j in pairs])
        elif method == "morris":
            from SALib.analyze import morris

            s = morris.analyze(problem, x, y, conf_level=CONF_LEVEL, num_levels=MORRIS_LEVELS, seed=seed)
            _rows(rows, out, method, names, "mu", s["mu"], [None] * len(names))
            _rows(rows, out, method, names, "mu_star", s["mu_star"], s["mu_star_conf"])
            _rows(rows, out, method, names, "sigma", s["sigma"], [None] * len(names))
        else:
            d = np.column_stack([table.column(gradient_column(out, k)).to_numpy() for k in names])
            nu, nu_c, dg, dg_c = dgsm_from_gradients(y, d, problem["bounds"])
            _rows(rows, out, method, names, "nu", nu, nu_c)
            _rows(rows, out, method, names, "dgsm", dg, dg_c)
    cols = list(zip(*rows)) if rows else [[]] * len(RESULT_COLUMNS)
    types = [pa.string()] * 4 + [pa.float64()] * 2
    return pa.table({k: pa.array(list(c), t) for k, c, t in zip(RESULT_COLUMNS, cols, types)})
