"""Gradient columns of a sweep (study/gradients.py) against central differences of the same
simulator, and DGSM from those exact derivatives against SALib's finite-difference DGSM.

One run does it all: the design holds base points, their +-h neighbours and SALib's
finite-difference points, and the study asks for gradient columns, so the chunk's single
forward-mode call returns derivatives and values at every row (one compilation)."""
import dataclasses
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from SALib.analyze import dgsm as salib_dgsm
from SALib.sample import finite_diff

from jaxmedusa.analysis.sensitivity import dgsm_from_gradients
from jaxmedusa.study import load_study, run_study
from jaxmedusa.study.spec import ExplicitDesign, StudyError

DATA = Path(__file__).resolve().parents[1] / "data"
# one worker under `pytest -n` (--dist loadgroup): tests/study/test_gradients.py and the DGSM run of
# tests/cli/test_sensitivity_cli.py compile the same forward-mode chunk (16 scenarios, 2 tangents)
pytestmark = pytest.mark.xdist_group("sens_offset_jvp")
OF = ["v2_delta_v", "v2_final_y", "v2_final_speed", "v1_final_y"]
WRT = ["lateral_offset", "speed_difference"]
H = {"lateral_offset": 1e-4, "speed_difference": 1e-4}  # [m], [m/s]: FD steps (see the tolerance)
# Noise floor of these outcomes below the damage threshold [output units]: second differences
# at h = 1e-6 show |f(x+h) - 2 f(x) + f(x-h)| up to 2.3e-8 (docs/gradients.md, "Noise floor"),
# so a central difference carries up to SIGMA / h of it
SIGMA = 2.5e-8
# The grid-parameter test: speed differences x - h, x, x + h [m/s] at four points above the
# damage threshold (3.22 m/s at 0.5 m offset: the outcomes are smooth to round-off there),
# h = 1e-6, and at one point below it (2.6), h = 1e-4 (its noise floor SIGMA)
GRID_SMOOTH, H_SMOOTH = (3.3, 3.5, 3.7, 3.9), 1e-6
GRID_FD = [2.6 + s * 1e-4 for s in (-1, 0, 1)] + [x + s * H_SMOOTH for x in GRID_SMOOTH for s in (-1, 0, 1)]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    study = load_study(DATA / "sens_offset.toml")
    rng = np.random.default_rng(7)
    base = np.column_stack([rng.uniform(0.25, 0.85, 4), rng.uniform(2.2, 3.8, 4)])  # random interior points
    rows = [base]
    for j, k in enumerate(WRT):  # +-h neighbours of each base point
        for s in (1, -1):
            x = base.copy()
            x[:, j] += s * H[k]
            rows.append(x)
    problem = {"num_vars": 2, "names": WRT, "bounds": [[0.2, 0.9], [2.0, 4.0]]}
    fd_x = finite_diff.sample(problem, 8, delta=1e-4, seed=3)  # SALib: 8 base points + one step per input
    # contact onset: the 0.3 m gap closes at 1 m/s in 0.3 s, the end of the run
    onset = np.array([[0.5, 1.0], [0.5, 1.0 + 1e-3], [0.5, 1.0 - 1e-3]])
    x = np.vstack(rows + [fd_x, onset])
    design = ExplicitDesign("test", {k: x[:, j] for j, k in enumerate(WRT)})
    st = dataclasses.replace(study, explicit=design)
    out = tmp_path_factory.mktemp("grad")
    run_study(st, out=out, progress=False)
    return pq.read_table(out / "scenarios.parquet").to_pandas(), len(base), fd_x, problem


def test_gradient_columns_match_central_differences(run):
    t, n, _, _ = run
    assert (t["status_name"] == "ok").all()
    for of in OF:
        for j, w in enumerate(WRT):
            col = f"d_{of}_d_{w}"
            g = t[col].to_numpy()[:n]
            plus = t[of].to_numpy()[n * (1 + 2 * j): n * (2 + 2 * j)]
            minus = t[of].to_numpy()[n * (2 + 2 * j): n * (3 + 2 * j)]
            f0 = t[of].to_numpy()[:n]
            fd = (plus - minus) / (2 * H[w])
            # Forward mode differentiates the fixed-step map exactly; the central difference
            # differs from it by its truncation h^2 |f'''| / 6, its noise SIGMA / h and, when a
            # kink of the map lies within +-h, by half the derivative's jump there. Kinks: the
            # crush law's largest overlap is the largest step sample, so the map's pieces are
            # one step of the peak's timing wide (~6.7e-3 m/s of speed difference at dt = 2e-4 s,
            # docs/gradients.md): at h = 1e-4 the chance that one lies within +-h is ~3 %. The
            # second differences rule it out here: a kink's jump J (0.1 to 0.3 of the derivative)
            # inside +-h gives |f''| ~ J / h >= 1e2, and |f''| <= 10 is asserted (with the noise's
            # 2 SIGMA / h^2 = 5). Truncation on a piece: f''' <= |f''| / l over a piece
            # l = 6.7e-3 -> h^2 |f'''| / 6 <= 2.5e-6. Noise: SIGMA / h = 2.5e-4 below the damage
            # threshold (points 0 and 2; measured 1.15e-4 at most). Bound: their sum.
            f2 = (plus - 2 * f0 + minus) / H[w] ** 2
            assert np.all(np.abs(f2) <= 10.0), (col, f2)
            assert np.all(np.abs(g - fd) <= SIGMA / H[w] + 2.5e-6), (col, g, fd)
            print(f"{col}: max |forward - FD| / |FD| = {np.max(np.abs(g - fd) / np.maximum(np.abs(fd), 1e-12)):.2e}")
    assert t["d_v2_delta_v_d_speed_difference"].iloc[:n].abs().min() > 0.1  # real dependences, not zeros


def test_dgsm_from_forward_mode_matches_salib_finite_differences(run):
    t, n, fd_x, problem = run
    start = 5 * n
    rows = t.iloc[start:start + len(fd_x)]
    np.testing.assert_allclose(rows[WRT].to_numpy(), fd_x)
    base = rows.iloc[::3]  # SALib's layout: a base point, then one step per input
    for of in ("v2_delta_v", "v2_final_y"):
        s = salib_dgsm.analyze(problem, fd_x, rows[of].to_numpy(), seed=1)
        d = base[[f"d_{of}_d_{w}" for w in WRT]].to_numpy()
        nu, _, dg, _ = dgsm_from_gradients(base[of].to_numpy(), d, problem["bounds"])
        # same base points; SALib's one-sided step of 1e-4 of the range biases nu by
        # ~2 h f''/f' ~ 1e-3 relative: 1 % covers it
        np.testing.assert_allclose(nu, s["vi"], rtol=0.01)
        np.testing.assert_allclose(dg, s["dgsm"], rtol=0.01)
        assert np.all(np.isfinite(dg)) and dg.max() > 0


def test_unknown_gradient_names_fail_naming_the_key_and_valid_names(tmp_path):
    text = (DATA / "sens_offset.toml").read_text().replace(str(Path("../../studies")), str(DATA.parent.parent / "studies"))
    bad_of = text.replace('of = ["v2_delta_v",', 'of = ["v2_delta_vee",')
    p = tmp_path / "s.toml"
    p.write_text(bad_of)
    with pytest.raises(StudyError, match=r"outputs\.gradients\.of.*'v2_delta_vee'.*valid: .*v2_delta_v"):
        load_study(p)
    p.write_text(text.replace('wrt = ["lateral_offset",', 'wrt = ["offset",'))
    with pytest.raises(StudyError, match=r"outputs\.gradients\.wrt.*'offset'.*lateral_offset, speed_difference"):
        load_study(p)


def test_gradient_columns_refuse_medusas_own_search(tmp_path):
    """The MEDUSA law's default shape (medusa_search) has no useful derivatives: a gradient
    study under that law must name an analytic shape."""
    text = (DATA / "sens_offset.toml").read_text().replace(str(Path("../../studies")), str(DATA.parent.parent / "studies"))
    assert 'contact_law = "crush"' in text
    p = tmp_path / "s.toml"
    p.write_text(text.replace('contact_law = "crush"', 'contact_law = "medusa"'))
    with pytest.raises(StudyError, match=r"simulation\.contact_geometry.*'medusa_search'.*superellipsoid"):
        load_study(p)
    p.write_text(text.replace('contact_law = "crush"', 'contact_law = "medusa"\ncontact_geometry = "superellipsoid"'))
    assert load_study(p).settings.contact_law == "medusa"


def test_gradients_at_contact_onset_are_finite(run):
    """At onset (contact starting at the run's last steps) the physical law's force starts
    from zero penetration, so the fixed-step run is continuous there and its derivative is
    finite; first_contact_time itself jumps (docs/sensitivity.md)."""
    t, n, fd_x, _ = run
    rows = t.iloc[5 * n + len(fd_x):]
    assert len(rows) == 3
    grads = rows[[c for c in t.columns if c.startswith("d_")]].to_numpy()
    assert np.all(np.isfinite(grads))


def _grid_study(tmp_path, points, law="crush"):
    """sens_offset.toml as a grid: lateral offset 0.5 m, speed difference at `points` (+ 4.0:
    16 rows, the module run's chunk size, with its two tangents: one compiled shape per law);
    the scenarios table sorted by speed difference."""
    text = (DATA / "sens_offset.toml").read_text().replace("../../studies", str(DATA.parent.parent / "studies"))
    text = text.replace('kind = "sobol"\nn = 4\n', 'kind = "grid"\n')
    text = text.replace("lateral_offset = { uniform = [0.2, 0.9],", "lateral_offset = { values = [0.5],")
    text = text.replace("speed_difference = { uniform = [2.0, 4.0],",
                        f"speed_difference = {{ values = {[*points, 4.0]!r},")
    text = text.replace('contact_law = "crush"', f'contact_law = "{law}"')
    p = tmp_path / f"grid_{law}.toml"
    p.write_text(text)
    study = load_study(p)  # before the fix: StudyError "unknown or non-continuous parameter"
    assert [q.dist.kind for q in study.parameters] == ["values", "values"]
    assert study.settings.contact_law == law
    run_study(study, out=tmp_path / f"out_{law}", progress=False)
    t = pq.read_table(tmp_path / f"out_{law}" / "scenarios.parquet").to_pandas().sort_values("speed_difference")
    assert (t["status_name"] == "ok").all() and len(t) == 16
    return t


def test_gradient_wrt_a_numeric_grid_parameter_matches_central_differences(tmp_path):
    """A parameter given as a grid of numbers (`values = [...]`) is a numeric field evaluated at
    listed points: its gradient column is the derivative there (the study once refused it as
    "non-continuous"). The grid holds x - h, x and x + h at five points x, so the run carries
    its own central differences: tight above the damage threshold, where the outcomes are
    smooth to round-off, and at the noise floor below it."""
    t = _grid_study(tmp_path, GRID_FD)
    hs = np.array([1e-4] + [H_SMOOTH] * 4)  # 2.6 first (sorted), then GRID_SMOOTH
    for of in ("v2_delta_v", "v2_final_speed"):
        f = t[of].to_numpy()[:15].reshape(5, 3)  # rows x - h, x, x + h
        g = t[f"d_{of}_d_speed_difference"].to_numpy()[:15].reshape(5, 3)[:, 1]
        fd = (f[:, 2] - f[:, 0]) / (2 * hs)
        # below the threshold: the bound of test_gradient_columns_match_central_differences
        assert abs(g[0] - fd[0]) <= SIGMA / 1e-4 + 2.5e-6, (of, g, fd)
        # above it: round-off only, ~eps_run |f| / h with eps_run ~1e-13 relative after 1500
        # steps and |f| <= 25: 2.5e-6; bound 1e-5 (measured at most 2.5e-6 at h = 1e-6)
        assert np.all(np.abs(g[1:] - fd[1:]) <= 1e-5), (of, g, fd)
        assert np.all(np.abs(g) > 0.1)  # a real dependence (delta_v2 grows with the closing speed)
        print(of, "forward - central:", g - fd)
    # The damage threshold is a kink of the law, not of the steps: once the largest overlap
    # passes a structure's no-damage deflection A/B (as its share s_i of the overlap: 0.08 m /
    # 0.524 = 0.153 m for vehicle 2's rear, reached at 3.22 m/s here) permanent crush starts,
    # less of the crush springs back, and d(delta-V at 0.3 s)/d(speed difference) falls from
    # 0.63 to 0.41 (docs/gradients.md, "The damage threshold")
    d = t["d_v2_delta_v_d_speed_difference"].to_numpy()
    assert d[1] > 0.55 and np.all(d[4:10] < 0.5), d
    # lateral_offset's column at its single value is a derivative too (finite, defined)
    assert np.isfinite(t["d_v2_delta_v_d_lateral_offset"]).all()


def test_physical_law_gradient_columns_match_central_differences(tmp_path):
    """The physical law (spring k delta plus dashpot c d(delta)/dt, no history): its gradient
    columns against central differences carried by the run (h = 1e-4 m/s at five points of
    speed difference). Its force jumps by c v at onset, so the outcome is a staircase with a
    riser ~c v dt / m = 4e-3 m/s wherever onset crosses a step (every 6.7e-3 m/s of speed
    difference, docs/sensitivity.md, "Contact onset"): forward mode is the slope of the tread,
    and the central difference measures it when x +- h lie on one tread (a riser inside would
    show as |f''| ~ 4e-3 / h^2 = 4e5, against the asserted 1e3)."""
    h = 1e-4
    points = (2.2, 2.6, 3.0, 3.4, 3.8)
    t = _grid_study(tmp_path, [x + s * h for x in points for s in (-1, 0, 1)], law="physical")
    for of in ("v2_delta_v", "v2_final_speed", "v2_final_y"):
        f = t[of].to_numpy()[:15].reshape(5, 3)
        g = t[f"d_{of}_d_speed_difference"].to_numpy()[:15].reshape(5, 3)[:, 1]
        fd = (f[:, 2] - f[:, 0]) / (2 * h)
        f2 = (f[:, 2] - 2 * f[:, 1] + f[:, 0]) / h**2
        print(of, "forward - central:", g - fd, "f2", f2)
        assert np.all(np.abs(f2) <= 1e3), (of, f2)
        # noise floor of these outcomes under this law: 13 second differences at h = 1e-6 show
        # up to 2e-9 at 3.0 m/s but 1.2e-6 to 1.7e-6 at 2.2 m/s, where the search for the contact
        # point along the cars' nearly parallel flat faces stops short by up to 1e-6 m (with
        # either form of the squareness exponents, tests/contact/test_static_exponents.py). The
        # largest of 13 being ~2.5 x sqrt(6) sigma: sigma <= 3e-7 per value, so the central
        # difference carries sqrt(2) sigma / (2 h) = 2.1e-3 (6.4e-3 at 3 sd); truncation on a
        # tread h^2 |f'''| / 6 with f''' <= |f''| / 6.7e-3 <= 1.5e5: 2.5e-4. Bound 7e-3 (0.5 %
        # of the derivative; the tangent faults it guards against are 10-300x)
        assert np.all(np.abs(g - fd) <= 7e-3), (of, g, fd)
    assert np.all(np.abs(t["d_v2_delta_v_d_speed_difference"].to_numpy()[:15]) > 0.1)
