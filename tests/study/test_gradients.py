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
# speed differences x - h, x, x + h around five points [m/s] (the grid-parameter test)
GRID_FD = [x + s * 1e-4 for x in (2.2, 2.6, 3.0, 3.4, 3.8) for s in (-1, 0, 1)]


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
            # differs from it by its truncation h^2 |f'''| / 6 and its round-off ~eps_run |f| / h.
            # f'' from the same rows (second differences) is <= 10 in these units (asserted);
            # f''' <= |f''|max / l with l = 0.01 (1 % of either range: over 0.01 m/s or 0.01 m
            # contact onset moves by ~1e-3 s, five fixed steps of 2e-4 s, the scale on which the
            # step-sampled contact force changes shape), so the truncation is <= 1e-8 / 6 * 1e3
            # = 1.7e-6; eps_run = 1e-12 (1500 steps of float64 rounding) gives 1e-12 * 25 / 1e-4
            # = 2.5e-7, so 2e-6 held with the earlier crush law (measured 7.7e-7). The crush law's
            # unloading exponent now follows the elastic fraction q = (dmax - dp) / dmax
            # (e(q) ~ q^6, contact/laws/crush.py), whose shape changes fast with dmax near the
            # permanent-crush threshold: measured up to 5.3e-5 here (0.7 % of a 7.4e-3 derivative,
            # lateral offset) and 1.15e-4 in the grid test below (delta-V there also drops from
            # 0.63 to 0.41 m/s between 3.0 and 3.4 m/s: piecewise smooth). Bound: 2e-4 absolute.
            f2 = (plus - 2 * f0 + minus) / H[w] ** 2
            assert np.all(np.abs(f2) <= 10.0), (col, f2)
            assert np.all(np.abs(g - fd) <= 2e-4), (col, g, fd)
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


def test_gradient_wrt_a_numeric_grid_parameter_matches_central_differences(tmp_path):
    """A parameter given as a grid of numbers (`values = [...]`) is a numeric field evaluated at
    listed points: its gradient column is the derivative there (the study once refused it as
    "non-continuous"). The grid holds x - h, x and x + h at five points x (and 4.0: 16 rows, the
    module run's chunk size, with its two tangents: one compiled shape), so the run carries
    its own central differences."""
    text = (DATA / "sens_offset.toml").read_text().replace("../../studies", str(DATA.parent.parent / "studies"))
    h = H["speed_difference"]
    text = text.replace('kind = "sobol"\nn = 4\n', 'kind = "grid"\n')
    text = text.replace("lateral_offset = { uniform = [0.2, 0.9],", "lateral_offset = { values = [0.5],")
    text = text.replace("speed_difference = { uniform = [2.0, 4.0],",
                        f"speed_difference = {{ values = {[*GRID_FD, 4.0]!r},")
    p = tmp_path / "grid.toml"
    p.write_text(text)
    study = load_study(p)  # before the fix: StudyError "unknown or non-continuous parameter"
    assert [q.dist.kind for q in study.parameters] == ["values", "values"]
    run_study(study, out=tmp_path / "out", progress=False)
    t = pq.read_table(tmp_path / "out" / "scenarios.parquet").to_pandas().sort_values("speed_difference")
    assert (t["status_name"] == "ok").all() and len(t) == 16
    for of in ("v2_delta_v", "v2_final_speed"):
        f = t[of].to_numpy()[:15].reshape(5, 3)  # rows x - h, x, x + h
        g = t[f"d_{of}_d_speed_difference"].to_numpy()[:15].reshape(5, 3)[:, 1]
        fd = (f[:, 2] - f[:, 0]) / (2 * h)
        # the bound of test_gradient_columns_match_central_differences (same h, same outputs)
        assert np.all(np.abs(g - fd) <= 2e-4), (of, g, fd)
        assert np.all(np.abs(g) > 0.1)  # a real dependence (delta_v2 grows with the closing speed)
    # lateral_offset's column at its single value is a derivative too (finite, defined)
    assert np.isfinite(t["d_v2_delta_v_d_lateral_offset"]).all()
