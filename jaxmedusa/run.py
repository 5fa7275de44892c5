"""Run one scenario (a MEDUSA folder or a TOML file) and write its tables: `jaxmedusa run`."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import jax
import numpy as np

from jaxmedusa.analysis.crash_pulse import PulseTracker, pulse_columns, ticks_for
from jaxmedusa.analysis.events import ContactEventTracker, episode_columns
from jaxmedusa.analysis.rest import RestTracker
from jaxmedusa.analysis.skids import MARK_UNITS, mark_columns
from jaxmedusa.analysis.step_counts import StepCounts, counts_dict
from jaxmedusa.build import build_batch
from jaxmedusa.contact.stage import shape_name
from jaxmedusa.core.params import Settings
from jaxmedusa.core.safe_math import heading
from jaxmedusa.core.scenario import Scenario
from jaxmedusa.core.status import Status
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.analysis.damage import DamageTracker, damage_rows
from jaxmedusa.io.tables import provenance, write_columns, write_damage, write_pulse, write_trajectory
from jaxmedusa.io.validation import NAMED_SETTINGS
from jaxmedusa.solver.save_grid import prev_of
from jaxmedusa.solver.simulate import Samples, SimResult, cached_advance, cached_init_metrics
from jaxmedusa.solver.step_control import STEP_CONTROLS
from jaxmedusa.io.medusa_files import MedusaInputError
from jaxmedusa.io.overlap_check import initial_overlaps
from jaxmedusa.solver.trackers import ENERGY_GAIN_MARGIN, CombinedTracker, EnergyBalanceTracker, energy_gained

SLOTS_PER_CHUNK = 25  # save slots per jitted call, so progress can be shown between calls


@dataclass
class RunOutput:
    scenario: Scenario
    settings: Settings
    result: SimResult  # samples [1, S, ...] and final state of the single scenario
    out_dir: Path | None
    wall_time: float  # [s]
    pulse_columns: dict | None = None  # the crash pulse's columns (analysis.crash_pulse.pulse_columns), or None
    counts: dict | None = None  # step and contact counts {name: int} (analysis/step_counts.py COUNT_NAMES)
    rest: dict | None = None  # per vehicle {name: (V,)}: analysis.rest.REST_METRICS (rest, distance, skid length)
    energy: dict | None = None  # {"initial", "drive_work", "max_gain"} [J] (EnergyBalanceTracker)

    @property
    def status(self) -> Status:
        """The run's status: the loop's, or ENERGY_GAIN when it ran to the end creating energy."""
        return Status(int(self.result.final.clock.status[0]))

    @property
    def pulse(self):
        """The crash pulse as a pandas DataFrame (analysis.crash_pulse.pulse_table), or None."""
        if self.pulse_columns is None:
            return None
        import pandas as pd  # here: a run writes its tables without pandas (0.6 s to import)

        return pd.DataFrame(self.pulse_columns)


def make_settings(config: dict, **overrides) -> Settings:
    """Settings from defaults < a TOML [simulation] table < explicit overrides (None = unset).

    A named override (contact_law, contact_geometry, step_control) that no registry holds
    raises UnknownNameError (a ValueError) listing the valid names."""
    allowed = {f.name for f in fields(Settings)}
    values = {k: v for k, v in config.items() if k in allowed}
    values.update({k: v for k, v in overrides.items() if v is not None})
    for key, registry in NAMED_SETTINGS.items():
        if overrides.get(key) is not None:
            registry.resolve(overrides[key], where=f"option {key}")
    settings = Settings(**values)
    settings = replace(settings, contact_geometry=shape_name(settings))  # the law's default, by name
    for key in ("end_time", "dt", "save_every"):
        if not getattr(settings, key) > 0:
            raise ValueError(f"{key} must be positive, got {getattr(settings, key)}")
    if settings.end_time < settings.dt:
        raise ValueError(f"end_time {settings.end_time:g} s is shorter than one step (dt = {settings.dt:g} s): "
                         "nothing would be simulated")
    return settings


@dataclass
class LiveRun:
    """What a run has done so far, for a caller that must stop it (the CLI's Ctrl-C): filled
    by run_scenario as it goes; `write_partial()` writes the samples saved so far."""

    scenario: Scenario | None = None
    settings: Settings | None = None
    batch: object = None
    out_dir: Path | None = None
    chunks: list = field(default_factory=list)  # Samples (numpy) of the finished jitted calls

    def write_partial(self) -> Path | None:
        """Write OUT/trajectory.parquet of the samples saved so far (metadata
        jaxmedusa.interrupted_at [s]); None when nothing was saved yet."""
        chunks = list(self.chunks)
        if not chunks or self.out_dir is None:
            return None
        samples = Samples(*[np.concatenate([getattr(c, f) for c in chunks], axis=1) for f in Samples._fields])
        saved = np.asarray(samples.saved[0])
        t_last = float(np.asarray(samples.t[0])[saved][-1]) if saved.any() else 0.0
        meta = {**run_metadata(self.scenario, self.settings, self.batch), "jaxmedusa.interrupted_at": t_last}
        return write_trajectory(samples, self.batch, self.out_dir / "trajectory.parquet", meta)


def _any_running(state, settings: Settings) -> bool:
    """Whether some scenario is healthy and still has steps to take (on the host)."""
    control = STEP_CONTROLS.resolve(settings.step_control, where="Settings.step_control")
    clock = jax.device_get(state.clock)
    return bool(np.any(np.asarray(control.running(clock, settings)) & (np.asarray(clock.status) == Status.OK)))


def run_scenario(path: str | Path, end_time: float | None = None, dt: float | None = None,
                 save_every: float | None = None, out_root: str | Path | None = "results",
                 progress=None, tracker=None, contact_law: str | None = None,
                 contact_geometry: str | None = None, before_run=None, live: LiveRun | None = None,
                 intended_overlap: bool = False, end_condition: str | None = None) -> RunOutput:
    """Load, simulate and (if out_root is not None) write results/<name>/trajectory.parquet.

    `progress(done_fraction)` is called between jitted chunks when given. Every run counts
    its accepted and rejected steps, accepted steps in contact, contact runs and episodes
    (analysis/step_counts.py; `RunOutput.counts`, and `jaxmedusa.counts` in the trajectory
    table's metadata). Multi-vehicle runs
    record contact episodes (events.py) and write results/<name>/contact_events.parquet; runs
    in which something can be hit (two vehicles, or a barrier) record the crash pulse
    (analysis/crash_pulse.py, `RunOutput.pulse`) and write results/<name>/crash_pulse.parquet;
    runs in which some wheel slid write results/<name>/skid_marks.parquet (analysis/skids.py).
    `result.metrics` are the events' (or the given tracker's) metrics. `contact_law` and
    `contact_geometry` (names of LAWS and SHAPES) override the scenario's [simulation] table;
    with neither, a MEDUSA folder runs the MEDUSA law with its default shape (medusa_search).

    Vehicles overlapping at t = 0 raise MedusaInputError unless the scenario says
    `intended_overlap` (or the argument does); an end time shorter than one step raises
    ValueError. `before_run(scenario, settings, out_dir)` is called once the inputs are
    checked, before anything is compiled (the CLI checks the output folder there). `live`
    (a LiveRun) is filled as the run goes. Every run tracks its energy balance
    (EnergyBalanceTracker, `RunOutput.energy`); a run that ends healthy with more than
    ENERGY_GAIN_MARGIN of excess energy gets status ENERGY_GAIN. `end_condition` ("time" |
    "rest", solver/end_condition.py) overrides the scenario's [simulation] too.
    """
    scenario, config = load_scenario(path)
    settings = make_settings(config, end_time=end_time, dt=dt, save_every=save_every,
                             contact_law=contact_law, contact_geometry=contact_geometry,
                             end_condition=end_condition)
    overlaps = [] if (intended_overlap or scenario.intended_overlap) else initial_overlaps(scenario)
    if overlaps:
        raise MedusaInputError(f"{path}: " + "; ".join(overlaps) + " (contact boxes in plan view); if this is "
                               "meant, set intended_overlap = true in the scenario (or --intended-overlap)")
    out_dir = None if out_root is None else Path(out_root) / scenario.name
    if before_run is not None:
        before_run(scenario, settings, out_dir)
    batch, state = build_batch([scenario], dt=settings.dt)
    if live is not None:
        live.scenario, live.settings, live.batch, live.out_dir = scenario, settings, batch, out_dir
    if tracker is None and len(scenario.vehicles) > 1:
        tracker = ContactEventTracker()
    pulse = settings.contact and (len(scenario.vehicles) > 1 or bool(scenario.barriers))
    events = tracker
    # (counts, events or None, pulse or None, damage or None, energy balance): one combined
    # tracker, unpacked after the run;
    # a step of dt fills up to ceil(dt / 0.1 ms) ticks of the 10 kHz pulse grid (dt only shrinks)
    pulse_tracker = PulseTracker(ticks_per_step=ticks_for(settings.dt)) if pulse else None
    damage_tracker = DamageTracker() if pulse else None  # crush profiles and CDC per collision
    tracker = CombinedTracker((StepCounts(), events, pulse_tracker, damage_tracker, EnergyBalanceTracker(), RestTracker()))

    start = time.perf_counter()
    metrics = cached_init_metrics(batch, state, tracker)
    chunks = live.chunks if live is not None else []
    prev = prev_of(state)  # the state before the last accepted step, carried between chunks
    n_chunks = math.ceil(settings.n_samples / SLOTS_PER_CHUNK)
    for i in range(n_chunks):
        (state, metrics, prev), samples = cached_advance(batch, state, metrics, settings, SLOTS_PER_CHUNK, tracker,
                                                  prev=prev)
        chunks.append(jax.device_get(samples))
        if progress is not None:
            # a run that ended at rest (end_condition = "rest") is done before end_time
            progress(float(state.clock.t[0]) / settings.end_time if _any_running(state, settings) else 1.0)
    # The steps after the last save (main.c runs while t <= end_time): further calls of the
    # same compiled `advance` (its save rule takes nothing past end_time) instead of
    # `finish`, which would compile the step body a second time.
    while _any_running(state, settings):
        (state, metrics, prev), _ = cached_advance(batch, state, metrics, settings, SLOTS_PER_CHUNK, tracker, prev=prev)
    jax.block_until_ready(state)
    wall = time.perf_counter() - start
    samples = Samples(*[np.concatenate([getattr(c, f) for c in chunks], axis=1)[:, : settings.n_samples]
                        for f in Samples._fields])
    counts_m, own, pm, dm, balance, rest_m = jax.device_get(metrics)  # numpy from here on: no eager JAX operations
    energy = {k: float(np.asarray(v)[0]) for k, v in balance._asdict().items()}
    clock = jax.device_get(state.clock)
    if int(clock.status[0]) == Status.OK and bool(energy_gained(balance)[0]):
        state = replace(state, clock=replace(clock, status=np.full_like(clock.status, int(Status.ENERGY_GAIN))))
    counts = {k: int(v[0]) for k, v in counts_dict(counts_m).items()}
    pulse_cols = pulse_columns(jax.tree.map(lambda x: x[0], pm), len(scenario.vehicles)) if pulse else None
    result = SimResult(samples=samples, final=state, metrics=own)
    one = lambda tree: jax.tree.map(lambda x: np.asarray(x)[0], tree)  # noqa: E731  (the one scenario)
    rest = RestTracker().summarize(one(rest_m), None, one(jax.device_get(state)), xp=np)

    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        meta = {**run_metadata(scenario, settings, batch, counts), "jaxmedusa.energy_balance": energy,
                "jaxmedusa.status": Status(int(np.asarray(state.clock.status)[0])).label}
        write_trajectory(samples, batch, out_dir / "trajectory.parquet", meta)
        if isinstance(events, ContactEventTracker):
            write_columns(episode_columns(own, len(scenario.vehicles)), out_dir / "contact_events.parquet")
        if pulse_cols is not None:
            write_pulse(pulse_cols, out_dir / "crash_pulse.parquet")
        if dm is not None:
            first = jax.tree.map(lambda x: np.asarray(x)[0], (dm, batch.vehicle))  # the one scenario
            rows = damage_rows(*first, len(scenario.vehicles))
            write_damage(rows, out_dir / "damage.parquet")
        keep = np.asarray(samples.saved[0])
        marks = mark_columns(samples.t[0][keep], samples.wheel_point[0][keep], samples.wheel_skid[0][keep],
                             np.asarray(batch.valid[0]))
        if len(marks["vehicle"]):  # analysis/skids.py: one row per skid mark
            write_columns(marks, out_dir / "skid_marks.parquet", provenance({"jaxmedusa.units": MARK_UNITS}))
        else:  # no marks: none from an earlier run of the scenario either
            (out_dir / "skid_marks.parquet").unlink(missing_ok=True)
    return RunOutput(scenario=scenario, settings=settings, result=result, out_dir=out_dir, wall_time=wall,
                     pulse_columns=pulse_cols, counts=counts, energy=energy, rest=rest)


def run_metadata(scenario: Scenario, settings: Settings, batch, counts: dict | None = None) -> dict:
    """Trajectory-table metadata that pictures need (JSON values): jaxmedusa.scenario (name),
    jaxmedusa.vehicles (per vehicle: number, name, model (1-based), contact_semi_axes [m]),
    jaxmedusa.contact_shape (geometry kind, eps1, eps2), jaxmedusa.road (road.dat points
    (x, y, z [m], bank [deg]) or null for the flat plane), jaxmedusa.settings, and
    jaxmedusa.counts when given (step and contact counts, analysis/step_counts.py)."""
    vehicles = [dict(number=i + 1, name=f"vehicle {i + 1}", model=v.model + 1,
                     contact_semi_axes=[0.5 * float(a) for a in scenario.models[v.model].contact_dims])
                for i, v in enumerate(scenario.vehicles)]
    road = scenario.road.points
    return {
        "jaxmedusa.scenario": scenario.name,
        "jaxmedusa.vehicles": vehicles,
        "jaxmedusa.contact_shape": dict(kind=shape_name(settings), eps1=float(np.ravel(batch.contact.eps1)[0]),
                                        eps2=float(np.ravel(batch.contact.eps2)[0])),
        "jaxmedusa.road": None if road is None else [list(map(float, p)) for p in road],
        "jaxmedusa.settings": dict(end_time=settings.end_time, dt=settings.dt, save_every=settings.save_every,
                                   contact_law=settings.contact_law, contact_geometry=shape_name(settings),
                                   end_condition=settings.end_condition, rest_speed=settings.rest_speed,
                                   rest_hold=settings.rest_hold),
        **({} if counts is None else {"jaxmedusa.counts": counts}),
    }


def summary_rows(out: RunOutput) -> list[dict]:
    """One summary dict per vehicle (1-based numbers): time, position, speed, heading and
    energy at the last saved sample (end_time, the rest time of a run that ends at rest, or
    the last save time before a failure), i.e. the trajectory table's last row, not the final
    state a fraction of a step later; and the rest metrics of analysis/rest.py (rest_x, ...,
    distance, skid_length; rest_time -1: still moving at the end)."""
    s = out.result.samples
    last = int(np.nonzero(np.asarray(s.saved[0]))[0][-1])
    r, F, v = (np.asarray(x[0, last]) for x in (s.r, s.F, s.v))
    rows = []
    for i in range(len(out.scenario.vehicles)):
        heading_rad = float(heading(F[i], xp=np))
        rest = {k: float(v[i]) for k, v in (out.rest or {}).items()}
        rows.append(dict(**rest,
            vehicle=i + 1, time=float(s.t[0, last]),
            x=float(r[i, 0]), y=float(r[i, 1]), z=float(r[i, 2]),
            speed=float(np.hypot(v[i, 0], v[i, 1])),
            heading_deg=math.degrees(heading_rad),
            energy_start=float(s.energy[0, 0, i]), energy_end=float(s.energy[0, last, i]),
        ))
    return rows
