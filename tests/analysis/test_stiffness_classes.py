"""Crush stiffness by vehicle class (contact/laws/stiffness_classes.py, docs/crash-law.md):

- the unit conversion against the definitions of the inch and the pound-force, and the
  printed values against the source's own G = A^2 / 2B;
- the converted A, B reproduce Campbell's line F/w = A + B C in the law (front and side);
- a [[models]] table names a class (`crush_class`), its own crush_* keys win, the faces the
  class lacks keep the model's; an unknown class exits 2 listing the valid names;
- rigid-wall crashes of each class, front at 56 km/h and side at 32 km/h: the CRASH3 energy
  of the residual crush with the class's A, B equals the energy the structure absorbed within
  5 %, and (front) the CRASH3 barrier speed is within 3 % of the impact speed (the tolerances
  of tests/analysis/test_crash3_consistency.py).
"""
from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest
from typer.testing import CliRunner

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.analysis.crash3 import barrier_equivalent_speed, crash3_energy
from jaxmedusa.analysis.outcomes import Outcomes, outcome_arrays
from jaxmedusa.build import build_batch
from jaxmedusa_cli.app import app
from jaxmedusa.contact.laws.crush import crush_force, face_coefficients
from jaxmedusa.contact.laws.stiffness_classes import (A_PER_LB_IN, B_PER_LB_IN2, CRUSH_CLASSES,
                                                      crush_class_fields)
from jaxmedusa.core.params import Settings
from jaxmedusa.core.scenario import BarrierSpec, ModelSpec, VehicleSpec
from jaxmedusa.io.medusa_files import MedusaInputError
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.solver.simulate import simulate

ROOT = Path(__file__).resolve().parents[2]
BARRIER_TOML = ROOT / "studies" / "medusa" / "barrier" / "scenario.toml"
CLASSES = CRUSH_CLASSES.names()
MASS, WIDTH, DT = 1573.0, 1.6, 2e-4  # the barrier study's car and its contact width


def test_unit_conversion_and_the_printed_g():
    """1 lb/in = 4.4482216152605 N / 0.0254 m = 175.1268 N/m and 1 lb/in^2 = 6894.757 N/m^2
    (the pound-force and the inch by definition; 6894.757 Pa is the psi). The source prints
    G = A^2/2B [lb] beside A and B, each rounded to a whole unit: its G must lie within the
    range of A^2/2B over A +- 0.5 and B +- 0.5 (a check that the three were read together)."""
    assert A_PER_LB_IN == pytest.approx(175.12683, rel=1e-7)
    assert B_PER_LB_IN2 == pytest.approx(6894.7573, rel=1e-7)
    for name in CLASSES:
        c = CRUSH_CLASSES.resolve(name)
        fields = c.fields()
        for face, (a, b, g) in c.printed.items():
            assert fields[f"crush_a_{face}"] == pytest.approx(a * 175.12683, rel=1e-7)
            assert fields[f"crush_b_{face}"] == pytest.approx(b * 6894.7573, rel=1e-7)
            assert (a - 0.5) ** 2 / (2 * (b + 0.5)) <= g <= (a + 0.5) ** 2 / (2 * (b - 0.5)), (name, face)


@pytest.mark.parametrize("name", CLASSES)
def test_the_law_follows_the_campbell_line_of_each_class(name):
    """Loading against a rigid wall: at a dynamic crush x the force per width is B x and the
    permanent crush C = x - A/B, so F/w = A + B C (Campbell; exact to round-off), for the
    faces the class gives, the face chosen by the contact normal as in the simulation."""
    f = crush_class_fields(name)
    F = np.eye(3)
    normals = {"front": np.array([1.0, 0.0, 0.0]), "side": np.array([0.0, 1.0, 0.0]),
               "rear": np.array([-1.0, 0.0, 0.0])}
    m = ModelSpec.__dataclass_fields__
    crush_a = np.array([f.get(f"crush_a_{k}", m[f"crush_a_{k}"].default) for k in ("front", "rear", "side")])
    crush_b = np.array([f.get(f"crush_b_{k}", m[f"crush_b_{k}"].default) for k in ("front", "rear", "side")])
    faces = [k for k in ("front", "rear", "side") if f"crush_a_{k}" in f]
    assert faces  # a class gives at least one face
    for face in faces:
        a, b = (float(v) for v in face_coefficients(crush_a, crush_b, F, normals[face]))
        assert (a, b) == pytest.approx((f[f"crush_a_{face}"], f[f"crush_b_{face}"]), rel=1e-12)
        for c in (0.05, 0.3, 0.7):  # residual crush [m]
            x = c + a / b
            out = crush_force(x, 1.0, np.array([x, 0.0, 0.0]), WIDTH, a, b, 0.0, np.inf, 24.5, 0.0, 0.10)
            assert float(out.residual[0]) == pytest.approx(c, abs=1e-12)
            assert float(out.force) / WIDTH == pytest.approx(a + b * c, rel=1e-12)


def _with_class(tmp_path, line: str) -> Path:
    text = BARRIER_TOML.read_text().replace("eq_F = [", f"{line}\neq_F = [", 1)
    p = tmp_path / "scenario.toml"
    p.write_text(text)
    return p


def test_a_model_names_its_class_and_its_own_values_win(tmp_path):
    """crush_class sets the faces its source gives; the table's crush_b_front wins over the
    class's; the rear (no source value) keeps the ModelSpec default."""
    name = "crash3_category_4"
    f = crush_class_fields(name)
    sc, _ = load_scenario(_with_class(tmp_path, f'crush_class = "{name}"'))
    m = sc.models[0]
    assert (m.crush_a_front, m.crush_b_front, m.crush_a_side, m.crush_b_side) == \
        (f["crush_a_front"], f["crush_b_front"], f["crush_a_side"], f["crush_b_side"])
    assert (m.crush_a_rear, m.crush_b_rear) == (40.0e3, 500.0e3)
    sc, _ = load_scenario(_with_class(tmp_path, f'crush_class = "{name}"\ncrush_b_front = 6e5'))
    assert sc.models[0].crush_b_front == 6e5 and sc.models[0].crush_a_front == f["crush_a_front"]
    # the same through [overrides.models.1] (a model read from model.dat takes a class this way)
    p = tmp_path / "override.toml"
    p.write_text(BARRIER_TOML.read_text() + f'\n[overrides.models.1]\ncrush_class = "{name}"\n')
    m = load_scenario(p)[0].models[0]
    assert (m.crush_a_side, m.crush_b_side, m.crush_b_rear) == (f["crush_a_side"], f["crush_b_side"], 500.0e3)


def test_an_unknown_class_exits_2_listing_the_valid_names(tmp_path):
    p = _with_class(tmp_path, 'crush_class = "midsize_car"')
    with pytest.raises(MedusaInputError, match=r"models\[1\]\.crush_class: unknown crush stiffness class"):
        load_scenario(p)
    result = CliRunner().invoke(app, ["run", str(p), "-t", "0.01", "--out", str(tmp_path / "out")])
    out = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "'midsize_car'" in out and "valid: " + ", ".join(CLASSES) in out and "Traceback" not in out
    assert not (tmp_path / "out").exists()  # nothing ran


# (class, face, impact speed [km/h], engaged width [m]): the front into the barrier study's
# wall at 56 km/h (NCAP), the left side sideways into a wall at 32 km/h (the FMVSS 214 pole
# test's speed); the engaged width is the contact shape's width or length (4.0 x 1.6 m)
RUNS = [(name, face, kmh, width) for name in CLASSES
        for face, kmh, width in (("front", 56.0, 1.6), ("side", 32.0, 4.0))
        if f"crush_a_{face}" in crush_class_fields(name)]


@functools.lru_cache(maxsize=None)
def _barrier_runs():
    """One batch (one compilation; 0.25 s at a constant 2e-4 s as the CRASH3 consistency
    test): the barrier study's car with each class's coefficients, 1 cm from a rigid wall,
    front first or (side runs) moving sideways to its left, the wall parallel to its side."""
    cases, sideways = [], []
    for name, face, kmh, _ in RUNS:
        sc, cfg = load_scenario(BARRIER_TOML)
        for k, v in crush_class_fields(name).items():
            setattr(sc.models[0], k, v)
        if face == "front":
            sc.vehicles[0] = VehicleSpec(model=0, x=0.29, y=0.0, orientation=0.0, speed=kmh / 3.6)
        else:
            sc.vehicles[0] = VehicleSpec(model=0, x=0.0, y=0.0, orientation=0.0, speed=0.0)
            sc.barriers = [BarrierSpec(kind="plane", position=(0.0, 0.81, 0.0), normal=(0.0, -1.0, 0.0))]
        cases.append(sc)
        sideways.append(kmh / 3.6 if face == "side" else 0.0)
    st = Settings(**{**cfg, "end_time": 0.25, "dt": DT, "save_every": 0.25, "step_control": "constant"})
    batch, s0 = build_batch(cases, dt=DT)
    vy = jnp.asarray(sideways)[:, None]  # (B, 1): the side runs start moving along +E2
    v = s0.vehicles.v.at[..., 1].add(vy)
    s0 = replace(s0, vehicles=replace(s0.vehicles, v=v))
    res = simulate(batch, s0, st, tracker=Outcomes(), record=False)
    return {k: np.asarray(v) for k, v in outcome_arrays(batch, res.final, res.metrics, Outcomes()).items()}


@pytest.mark.parametrize("k", range(len(RUNS)))
def test_a_barrier_crash_of_each_class_gives_its_crash3_energy(k):
    """CRASH3 energy of the simulated residual crush (uniform over the engaged width) with the
    class's A, B of the face hit, within 5 % of the structure's absorbed energy (the tolerance
    of test_crash3_consistency.py). Front runs: the barrier speed sqrt(2E/m) within 3 % of
    the impact speed as there. Side runs: the sliding tyres take part of the kinetic energy
    (about mu m g over the crush, a few %), so the speed is not compared."""
    name, face, kmh, width = RUNS[k]
    f = crush_class_fields(name)
    m = _barrier_runs()
    c = m["residual_crush"][k, 0]
    assert c > 0.1  # a real crush
    e3 = float(crash3_energy(np.full(6, c), width, f[f"crush_a_{face}"], f[f"crush_b_{face}"]))
    assert e3 == pytest.approx(m["absorbed_energy"][k, 0], rel=0.05)
    if face == "front":
        assert float(barrier_equivalent_speed(e3, MASS)) == pytest.approx(kmh / 3.6, rel=0.03)
