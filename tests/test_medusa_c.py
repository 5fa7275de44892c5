"""The original MEDUSA C program (benchmarks/medusa_c), rebuilt for the benchmarks: it builds,
reads the offset example as the report's files say, and before contact it is jaxmedusa's
offset run. Skipped where gcc is missing."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C program")


def _baseline():
    spec = importlib.util.spec_from_file_location("medusa_c_baseline", ROOT / "benchmarks" / "medusa_c_baseline.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def exe(tmp_path_factory) -> Path:
    """The instrumented build (medusa_trace), compiled into this test run's own folder."""
    return _baseline().build(trace=True, build_dir=tmp_path_factory.mktemp("medusa_c_build"))


def _run_c(exe: Path, tmp_path: Path, end_time: float, platoon: str | None = None) -> dict[int, dict[float, np.ndarray]]:
    """Run the instrumented build; {vehicle: {t: z[28]}} at the save points (full precision).
    platoon: the text of a platoon.dat to run instead of the offset example's."""
    m = _baseline()
    folder = m.prepare_run_dir(tmp_path)
    if platoon is not None:
        (folder / "platoon.dat").write_text(platoon)
    subprocess.run([str(exe), f"-t{end_time:g}"], cwd=folder, check=True, stdout=subprocess.DEVNULL)
    states: dict[int, dict[float, np.ndarray]] = {}
    for line in (folder / "medusa_states.txt").read_text().splitlines():
        kind, t, veh, z = line.split()
        if kind == "SAVE":
            states.setdefault(int(veh.split("=")[1]), {})[float(t[2:])] = np.array(
                [float(x) for x in z[2:].split(",")])
    return states


def test_c_program_starts_from_the_files_initial_state(exe, tmp_path):
    states = _run_c(exe, tmp_path, 0.025)
    z1, z2 = states[1][0.0], states[2][0.0]
    # platoon.dat: X 0 / 6, Y 0 / 0.4, SPEED 22 / 20, heading 0; model.dat model 1: R3 and the
    # EQUILIBRIUM directors (the program stores F[j][i] = Dij, z[3j+i] = F[i][j]). Exact: the
    # program copies these numbers (times cos 0 = 1 and sin 0 = 0) without arithmetic.
    assert list(z1[:3]) == [0.0, 0.0, 5.039617e-02] and list(z2[:3]) == [6.0, 0.4, 5.039617e-02]
    assert list(z1[3:12]) == [0.9972, 0.0, -0.0748, 0.0, 1.0, 0.0, 0.0749, 0.0, 0.9972]
    assert list(z1[12:15]) == [22.0, 0.0, 0.0] and list(z2[12:15]) == [20.0, 0.0, 0.0]
    assert not np.any(z1[15:]) and not np.any(z2[15:])
    assert sorted(states[1]) == pytest.approx([0.0, 0.01, 0.02], abs=1e-12)  # -s default 0.01 s


@pytest.mark.slow  # its default twin: tests/test_offset_default_path.py (the CLI's run to 1.1 s)
def test_c_program_is_jaxmedusa_before_contact(exe, tmp_path):
    from jaxmedusa.run import run_scenario

    states = _run_c(exe, tmp_path, 0.5)
    out = run_scenario(ROOT / "studies" / "medusa" / "offset", end_time=0.5, out_root=None)
    s = out.result.samples
    t, saved = np.asarray(s.t[0]), np.asarray(s.saved[0])
    k = int(np.nonzero(saved & (np.abs(t - 0.5) < 1e-9))[0][0])
    for veh in (1, 2):
        tc = min(states[veh], key=lambda x: abs(x - 0.5))
        z = states[veh][tc]
        # Two independent codes (C listing vs JAX port) of the same equations on the same
        # steps: they agree to rounding (measured 1e-12 m at 1 s); 1e-6 m and 1e-6 m/s is
        # the agreement the project documents before contact, with room for other CPUs.
        np.testing.assert_allclose(z[:3], np.asarray(s.r[0, k, veh - 1]), rtol=0, atol=1e-6)
        np.testing.assert_allclose(z[12:15], np.asarray(s.v[0, k, veh - 1]), rtol=0, atol=1e-6)
        F = np.array([[z[3 * j + i - 1] for j in (1, 2, 3)] for i in (1, 2, 3)])
        np.testing.assert_allclose(F, np.asarray(s.F[0, k, veh - 1]), rtol=0, atol=1e-9)


def test_ensemble_perturbation_reaches_the_program(exe, tmp_path):
    # benchmarks/medusa_ensemble.py moves vehicle 2 by dy = k * 1e-9 m through platoon.dat
    # (%.17g, read by atof): the program must start from y = 0.4 + dy, the same double as
    # Python's, and carry the move unchanged until contact.
    spec = importlib.util.spec_from_file_location("medusa_ensemble", ROOT / "benchmarks" / "medusa_ensemble.py")
    ens = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ens)
    dys = ens.perturbations(4, 1e-9)
    assert dys == [-2e-9, -1e-9, 1e-9, 2e-9]
    base = _run_c(exe, tmp_path / "base", 0.02)[2]
    for dy in dys[:1] + dys[-1:]:
        moved = _run_c(exe, tmp_path / f"dy{dy:g}", 0.02, platoon=ens.platoon_with_y2(0.4 + dy))[2]
        assert moved[0.0][1] == 0.4 + dy  # bit for bit: atof and Python parse %.17g to the same double
        np.testing.assert_array_equal(np.delete(moved[0.0], 1), np.delete(base[0.0], 1))  # only y moved
        # Before contact the motion is a straight roll: y(0.02) moves by dy; rounding of
        # y ~ 0.4 is 5.6e-17 per operation, 1e-15 allows ~20 of them and is 1e-6 of dy.
        t = max(moved)
        assert moved[t][1] - base[t][1] == pytest.approx(dy, abs=1e-15)


def _trace_body(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith(("STEP", "PAIR"))]


def test_c_program_reproduces_the_original_programs_trace_to_1_02_s(exe, tmp_path):
    # The trace in tests/data was written by the original program's own build (see
    # tests/data/README.md); ours must print the same lines (9-10 significant digits) for
    # its first two contact episodes: 14 rejected steps, the onset's dt sequence, phi, gamma.
    folder = _baseline().prepare_run_dir(tmp_path)
    subprocess.run([str(exe), "-t1.02"], cwd=folder, check=True, stdout=subprocess.DEVNULL)
    ours = _trace_body((folder / "medusa_trace.txt").read_text())
    theirs = _trace_body((ROOT / "tests" / "data" / "offset_contact_trace.txt").read_text())
    assert len(ours) > 200  # the first episode, its 100 held steps and the second onset
    assert ours == theirs[:len(ours)]
    # its counters agree with the trace's lines: every rejected step and every accepted step
    # in contact is logged there
    counts = dict(kv.split("=") for kv in (folder / "medusa_trace.txt").read_text().splitlines()[-1].split()[1:])
    steps = [ln.split() for ln in theirs[:len(ours)] if ln.startswith("STEP")]
    assert int(counts["rejected"]) == sum(s[4] == "reject" for s in steps) == 14
    assert int(counts["accepted_in_contact"]) == sum(s[3:] == ["contact=1", "accept"] for s in steps) == 2


def test_missing_gcc_is_a_clear_error(tmp_path, monkeypatch):
    m = _baseline()
    monkeypatch.setattr(m.shutil, "which", lambda name: None)
    with pytest.raises(m.CBaselineError, match="gcc not found"):
        m.build(build_dir=tmp_path)  # an empty folder: nothing built yet


def test_trace_collisions_counts_contact_after_a_10_ms_gap():
    """The ensemble's collisions of a C run, from its STEP lines, as jaxmedusa's step counts
    define them: a hand-made trace, then the original program's own trace."""
    trace = "\n".join([
        "STEP t=1.000000000 dt=5.0e-05 contact=1 reject",    # rejected: no contact step
        "STEP t=1.000000000 dt=3.0e-05 contact=1 accept",    # collision 1, ends 1.00003
        "STEP t=1.000030000 dt=3.0e-05 contact=1 accept",    # same run, ends 1.00006
        "STEP t=1.000060000 dt=3.0e-05 contact=0 accept",
        "STEP t=1.008000000 dt=3.0e-05 contact=1 accept",    # 7.97 ms after: same collision
        "STEP t=1.020000000 dt=3.0e-05 contact=1 accept",    # 11.97 ms after 1.00803: collision 2
        "STEP t=1.020030000 dt=3.0e-05 contact=0 accept",
        "STEP t=1.050000000 dt=5.0e-05 contact=1 reject",    # rejected: neither a collision nor the last
        "COUNTS accepted=6 rejected=2 accepted_in_contact=4 episodes=3",
    ])
    collisions, last = _baseline().trace_collisions(trace)
    assert collisions == 2 and last == pytest.approx(1.02003, abs=1e-12)
    assert _baseline().trace_collisions("STEP t=1.0 dt=5e-5 contact=0 accept") == (0, -1.0)
    # The original program's trace: one collision; its contact ends at 1.0358 s (the last
    # accepted step in contact starts at 1.035841619 s).
    oracle = (ROOT / "tests" / "data" / "offset_contact_trace.txt").read_text()
    collisions, last = _baseline().trace_collisions(oracle)
    assert collisions == 1 and 1.03584 < last < 1.03586


def test_state_energy_of_the_c_state_is_vehicle_c_energy_plus_translation(exe, tmp_path):
    """medusa_c_baseline.state_energy (eq. 1.33 in full of a C state vector, as the ensemble
    compares it with jaxmedusa's energy_end) against the program's own energy() in
    energy.asc (printed %e, 7 digits), which leaves out m v.v / 2: at t = 0, and at 1.05 s,
    after the first contact kicks, when the directors vibrate and their rates carry
    kilojoules (a wrong reading of d_i or w_i from z would show there)."""
    from jaxmedusa.io.scenario_toml import load_scenario

    m = _baseline()
    states = _run_c(exe, tmp_path, 1.05)
    rows = [[float(x) for x in ln.split()] for ln in (tmp_path / "energy.asc").read_text().splitlines()]
    scenario, _ = load_scenario(m.OFFSET)
    for row in (rows[0], rows[-1]):
        for veh in (1, 2):
            z = states[veh][min(states[veh], key=lambda t: abs(t - row[0]))]
            model = scenario.models[scenario.vehicles[veh - 1].model]
            translation = 0.5 * model.mass * float(np.dot(z[12:15], z[12:15]))
            assert m.state_energy(z, model) - translation == pytest.approx(row[veh], rel=1e-6, abs=1e-3)
    assert rows[-1][0] > 1.04 and rows[-1][1] > 1.5 * rows[0][1]  # the vibration is there
