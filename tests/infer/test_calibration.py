"""Simulation-based calibration (infer/calibration.py; Talts et al. 2018) of NUTS through the
simulator: the truth's rank among the posterior draws is uniform, and the 90 % intervals
cover the truth 90 % of the time.

The problem: one vehicle of the report's straight example rolling freely for 0.02 s at
constant steps of 2 ms (no contact: 10 steps, cheap: 6 ms per gradient of 100 replications),
its initial speed unknown with prior normal(21, 1) m/s, its x observed at the end with
sigma = 0.02 m: x ~ x0 + v T, so the data alone give v to sigma / T = 1 m/s, as the prior does, and the posterior sd is about
1 / sqrt(2) m/s (data and prior both matter). All replications run as one vmapped batch.
"""
from __future__ import annotations

import numpy as np
import pytest

from helpers import EXAMPLES
from jaxmedusa.infer import infer_from_dict
from jaxmedusa.infer.calibration import CALIBRATION_PROBLEMS, calibrate

STUDIES = EXAMPLES.parent
TABLE = CALIBRATION_PROBLEMS["free"]  # free rolling, 0.02 s (infer/calibration.py)


def _check(cal, replications, coverage_band):
    # a short warmup occasionally leaves a step size too large for the tails: allow 0.5 % of
    # the draws to be divergent (their trajectories are rejected, so they bias nothing by
    # themselves; the rank test below is what would show a bias)
    assert cal.failed == 0 and cal.divergent <= 0.005 * cal.draws_total, cal.divergent
    # uniform ranks: the chi-square test of the issue at its level (p > 0.01)
    assert np.all(cal.chi2_p > 0.01), (cal.chi2_p, cal.ranks)
    lo, hi = coverage_band
    assert np.all((lo <= cal.coverage90) & (cal.coverage90 <= hi)), cal.coverage90


def test_calibration_small():
    """100 replications, short chains (80 warmup, 39 draws: ranks 0..39 in 5 bins). Coverage
    band 0.81-0.99: +-3 binomial sd (sqrt(0.09 / 100) = 0.03) around 0.90."""
    cal = calibrate(infer_from_dict(TABLE, base_dir=STUDIES), replications=100, warmup=80, draws=39, thin=1, bins=5,
                    seed=1)
    _check(cal, 100, (0.81, 0.99))


def test_calibration_contact_small():
    """With contact under the crush law, cheap: CALIBRATION_PROBLEMS["contact_small"], the
    barrier car 1 cm from the wall, 0.12 s at 1 ms (the whole pulse and 20 ms of rebound), the
    impact speed unknown, x observed (infer/calibration.py says why these settings). 100
    replications, 40 warmup, 38 draws thinned to 19 (ranks 0..19 in 5 bins); coverage band
    0.81-0.99 (3 binomial sd at R = 100). Thinned because successive draws correlate (lag 1
    about 0.45): 19 unthinned draws covered 0.78, 0.84 and 0.88 on three seeds, too narrow;
    thinned 0.89, 0.88, 0.92 (chi-square p 0.25, 1.00, 0.39, no divergent draw). About 60 s
    of one core (2026-11-26). It fails with a wrong target (the log-Jacobian left
    out: p 7e-4, coverage 0.64) or the likelihood's gradient negated (p 1e-6, coverage 0.52);
    with that gradient dropped (the prior's alone) it still passed (p 0.74, coverage 0.82):
    a wrong gradient slows the chains but leaves their target right, and
    test_gradient_modes.py checks the gradient itself."""
    cal = calibrate(infer_from_dict(CALIBRATION_PROBLEMS["contact_small"], base_dir=STUDIES), replications=100,
                    warmup=40, draws=38, thin=2, bins=5, seed=1)
    _check(cal, 100, (0.81, 0.99))


@pytest.mark.slow
def test_calibration_full():
    """The issue's check: 400 replications, 100 warmup and 198 draws thinned to 99 (10 bins);
    ranks uniform (p > 0.01) and coverage within 0.85-0.95 (+-3.3 binomial sd at R = 400)."""
    cal = calibrate(infer_from_dict(TABLE, base_dir=STUDIES), replications=400, warmup=100, draws=198, thin=2,
                    bins=10, seed=2)
    _check(cal, 400, (0.85, 0.95))


@pytest.mark.slow
def test_calibration_contact():
    """With contact under the crush law: the 8 km/h rigid-barrier impact (0.45 s at constant
    1 ms steps: pulse and rebound), the impact speed unknown, x and speed observed at the
    end (benchmarks/infer_calibration.py --case contact says more and draws the figure).
    100 replications, 100 warmup + 99 draws (10 bins); coverage band 0.81-0.99 (3 binomial
    sd at R = 100). About 15 minutes of one core."""
    cal = calibrate(infer_from_dict(CALIBRATION_PROBLEMS["contact"], base_dir=STUDIES), replications=100, warmup=100, draws=99, thin=1,
                    bins=10, seed=3)
    _check(cal, 100, (0.81, 0.99))


@pytest.mark.slow
def test_worked_example_converges():
    """The worked example (studies/infer_offset_brake.toml, docs/inference.md) as the file
    says (4 chains, 200 warmup, 300 draws, dense mass matrix, two CPU devices when
    JAXMEDUSA_CPU_DEVICES=2): R-hat < 1.01 and no divergences (the issue's check). About 32
    minutes of CPU (20 min wall on two cores, 2026-11-26: no divergent draw, R-hat at most 1.003)."""
    from pathlib import Path

    from jaxmedusa.infer import load_infer, run_inference
    spec = load_infer(Path(__file__).resolve().parents[2] / "studies" / "infer_offset_brake.toml")
    result = run_inference(spec)
    assert np.all(result.summary["r_hat"] < 1.01), result.summary
    assert int(result.divergent.sum()) == 0
