"""Run one scenario (a MEDUSA folder or a TOML file) and write its tables: `jaxmedusa run`."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, fields
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from .build import build_batch
from .events import ContactEventTracker, episodes_table
from .inputs import load_scenario
from .params import Settings
from .scenario import Scenario
from .simulate import Samples, SimResult, advance, finish, init_metrics

SLOTS_PER_CHUNK = 25  # save slots per jitted call, so progress can be shown between calls


@dataclass
class RunOutput:
    scenario: Scenario
    settings: Settings
    result: SimResult  # samples [1, S, ...] and final state of the single scenario
    out_dir: Path | None
    wall_time: float  # [s]


def make_settings(config: dict, **overrides) -> Settings:
    """Settings from defaults < a TOML [simulation] table < explicit overrides (None = unset)."""
    allowed = {f.name for f in fields(Settings)}
    values = {k: v for k, v in config.items() if k in allowed}
    values.update({k: v for k, v in overrides.items() if v is not None})
    settings = Settings(**values)
    for key in ("end_time", "dt", "save_every"):
        if not getattr(settings, key) > 0:
            raise ValueError(f"{key} must be positive, got {getattr(settings, key)}")
    return settings


def run_scenario(path: str | Path, end_time: float | None = None, dt: float | None = None,
                 save_every: float | None = None, out_root: str | Path | None = "results",
                 progress=None, tracker=None) -> RunOutput:
    """Load, simulate and (if out_root is not None) write results/<name>/trajectory.parquet.

    `progress(done_fraction)` is called between jitted chunks when given. Multi-vehicle runs
    record contact episodes (events.py) and write results/<name>/contact_events.parquet.
    """
    scenario, config = load_scenario(path)
    settings = make_settings(config, end_time=end_time, dt=dt, save_every=save_every)
    batch, state = build_batch([scenario], dt=settings.dt)
    if tracker is None and len(scenario.vehicles) > 1:
        tracker = ContactEventTracker()
    # crash pulse (crash_pulse.py): recorded whenever something can be hit
    pulse = None
    if settings.contact and (len(scenario.vehicles) > 1 or scenario.barriers):
        from .crash_pulse import CombinedTracker, PulseTracker  # noqa: PLC0415

        pulse = PulseTracker()
        tracker = CombinedTracker((tracker, pulse)) if tracker is not None else pulse

    start = time.perf_counter()
    metrics = init_metrics(batch, state, tracker)
    chunks = []
    n_chunks = math.ceil(settings.n_samples / SLOTS_PER_CHUNK)
    for i in range(n_chunks):
        (state, metrics), samples = advance(batch, state, metrics, settings, SLOTS_PER_CHUNK, tracker)
        chunks.append(jax.device_get(samples))
        if progress is not None:
            progress(float(state.clock.t[0]) / settings.end_time)
    state, metrics = finish(batch, state, metrics, settings, tracker)
    jax.block_until_ready(state)
    wall = time.perf_counter() - start
    samples = Samples(*[np.concatenate([getattr(c, f) for c in chunks], axis=1)[:, : settings.n_samples]
                        for f in Samples._fields])
    result = SimResult(samples=samples, final=state, metrics=metrics)

    out_dir = None
    if out_root is not None:
        from .io import write_trajectory  # noqa: PLC0415

        out_dir = Path(out_root) / scenario.name
        out_dir.mkdir(parents=True, exist_ok=True)
        write_trajectory(samples, batch, out_dir / "trajectory.parquet")
        events = metrics[0] if pulse is not None and tracker is not pulse else metrics
        if isinstance(tracker, ContactEventTracker) or (pulse is not None and tracker is not pulse
                                                        and isinstance(tracker.trackers[0], ContactEventTracker)):
            episodes_table(events, len(scenario.vehicles)).to_parquet(out_dir / "contact_events.parquet", index=False)
        if pulse is not None:
            from .crash_pulse import pulse_table, write_pulse  # noqa: PLC0415

            pm = metrics if tracker is pulse else metrics[1]
            write_pulse(pulse_table(jax.tree.map(lambda x: x[0], pm), len(scenario.vehicles)),
                        out_dir / "crash_pulse.parquet")
    return RunOutput(scenario=scenario, settings=settings, result=result, out_dir=out_dir, wall_time=wall)


def summary_rows(out: RunOutput) -> list[dict]:
    """One summary dict per vehicle (1-based numbers): final position, speed, heading, energy."""
    from .vehicle import orientation_angles  # noqa: PLC0415

    s, fin = out.result.samples, out.result.final.vehicles
    last = int(np.nonzero(np.asarray(s.saved[0]))[0][-1])
    rows = []
    for i in range(len(out.scenario.vehicles)):
        heading = float(orientation_angles(jnp.asarray(fin.F[0, i]))[0])
        rows.append(dict(
            vehicle=i + 1,
            x=float(fin.r[0, i, 0]), y=float(fin.r[0, i, 1]), z=float(fin.r[0, i, 2]),
            speed=float(np.hypot(fin.v[0, i, 0], fin.v[0, i, 1])),
            heading_deg=math.degrees(heading),
            energy_start=float(s.energy[0, 0, i]), energy_end=float(s.energy[0, last, i]),
        ))
    return rows
