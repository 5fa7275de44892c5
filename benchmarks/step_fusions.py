"""Where a batched step's time goes, measured by JAX's profiler op by op, per phase and batch size.

    python benchmarks/step_fusions.py --batch 1 16 64 256 1024 --steps 200
    python benchmarks/step_fusions.py --batch 4 --steps 20 --top 10     # a quick check

A second view beside benchmarks/step_profile.py (which times each phase alone in its own
loop): here the real time loop of a study chunk (default studies/offset.toml, the crush-law
offset collision, float64) runs `--steps` steps, once with the cars as built (free driving,
contact off: the loop has no contact stage) and once with every pair's contact shapes
overlapping by 5 cm (`step_profile.touching_state`: the broad phase passes every pair, the
narrow phase and the law run every step). The loop runs on XLA's thunk runtime
(JAXMEDUSA_XLA_FLAGS=0, set here before jaxmedusa is imported: every fusion a separate
operation), and the JAX profiler's trace gives each operation's time. Each operation is put
in the phase whose name its op_name carries (the `jax.named_scope`s of solver/step.py,
solver/simulate.py and physics/vehicle.py: tires, road, vehicle_rates, contact_geometry,
contact_law, joints, corrector, step_control, masking, trackers, predict); the loop's own
work (its condition, the carry) is "other"; operations outside the loop (the chunk's set-up
and summary, once a run) are left out, and so are the loops and conditionals inside it
(while, conditional, call: the profiler times the operations within them as well).

What it measures: the operations' own run time, summed. The runtime's dispatch between them
is not in it, and operations the runtime ran at the same time on its thread pool count
each in full, so the sum may exceed the loop's wall time (given beside it). The default whole-loop
compilation (core/xla_flags.py) runs the same fused operations without dispatch, with XLA's
older loop emitters instead of its fusion emitters, so the split between phases carries
over, the absolute times roughly. Prints Markdown tables: microseconds per step per phase
and batch size, and the share of each; `--top N` lists the N dearest operations of the
largest batch with their phase and shape.
"""
from __future__ import annotations

import os

os.environ["JAXMEDUSA_XLA_FLAGS"] = "0"  # the thunk runtime: one profiler event per fused operation

import argparse  # noqa: E402
import collections  # noqa: E402
import dataclasses  # noqa: E402
import glob  # noqa: E402
import gzip  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import jax  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from jaxmedusa import study as S  # noqa: E402
from jaxmedusa.study.runner import run_batch  # noqa: E402
from offset_layers import build_chunk  # noqa: E402
from step_profile import touching_state  # noqa: E402

# most specific first: an operation of the tires also carries vehicle_rates in its op_name
PHASES = ("tires", "road", "vehicle_rates", "contact_geometry", "contact_law", "joints", "predict", "corrector",
          "step_control", "masking", "trackers")
OP = re.compile(r'^\s*%?([\w.\-]+) = (.*?) ([a-z\-]+)\(.*?metadata=\{op_name="([^"]+)"')
CONTAINERS = ("while", "conditional", "call")  # their time is that of the operations inside, traced too


def phase_of(op_name: str) -> str:
    """The phase of an operation from its op_name ("outside" the time loop: once a run)."""
    if "while/body" not in op_name:
        return "outside"
    for p in PHASES:
        if re.search(rf"[/(]{p}[)/]", op_name) or op_name.endswith(f"/{p}"):
            return p
    return "other"


def profile(study: S.Study, b: int, steps: int, contact: bool, trace_dir: Path):
    """({phase: seconds per step}, [(seconds per step, op, shape, phase)], wall seconds per step)."""
    settings = dataclasses.replace(study.settings, contact=contact, end_time=steps * study.settings.dt)
    st = dataclasses.replace(study, settings=settings)
    batch, state = build_chunk(st, b)
    if contact:
        state = touching_state(batch, state)
    tracker = st.tracker
    jax.block_until_ready(run_batch(batch, state, settings, tracker, False))  # compile
    compiled = run_batch.lower(batch, state, settings, tracker, False).compile().as_text()
    ops = {}
    for line in compiled.splitlines():
        m = OP.match(line)
        if m and m.group(3) not in CONTAINERS:
            ops[m.group(1)] = (m.group(2), phase_of(m.group(4)))
    t0 = time.perf_counter()
    jax.block_until_ready(run_batch(batch, state, settings, tracker, False))
    wall = time.perf_counter() - t0
    jax.profiler.start_trace(str(trace_dir))
    jax.block_until_ready(run_batch(batch, state, settings, tracker, False))
    jax.profiler.stop_trace()
    trace = sorted(glob.glob(f"{trace_dir}/**/*.trace.json.gz", recursive=True))[-1]
    per_op = collections.Counter()
    for e in json.load(gzip.open(trace))["traceEvents"]:
        if e.get("ph") == "X" and e.get("name") in ops:
            per_op[e["name"]] += e.get("dur", 0) * 1e-6
    by_phase = collections.Counter()
    for name, t in per_op.items():
        by_phase[ops[name][1]] += t / steps
    by_phase.pop("outside", None)  # the chunk's set-up and summary, once a run
    top = sorted(((t / steps, name, ops[name][0], ops[name][1]) for name, t in per_op.items()
                  if ops[name][1] != "outside"), reverse=True)
    return dict(by_phase), top, wall / steps


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 16, 64, 256, 1024])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message=".*runs backwards.*")
    study = S.load_study(a.study)
    tmp = Path(tempfile.mkdtemp(prefix="step-fusions-"))
    results = {}
    for contact in (False, True):
        for b in a.batch:
            by_phase, top, wall = profile(study, b, a.steps, contact, tmp / f"{int(contact)}_{b}")
            results[(contact, b)] = (by_phase, top, wall)
            print(f"contact={contact} B={b}: {sum(by_phase.values()) * 1e6:.1f} us of operations, "
                  f"{wall * 1e6:.1f} us wall per step", flush=True)
    out = {}
    for contact in (False, True):
        title = "touching (every pair's shapes overlap by 5 cm)" if contact else "free driving (contact off)"
        print(f"\n{title}, {a.steps} steps, thunk runtime; us per step (share of the operations' time):\n")
        print("| phase | " + " | ".join(f"B = {b}" for b in a.batch) + " |")
        print("|---|" + "---|" * len(a.batch))
        names = [p for p in (*PHASES, "other") if any(results[(contact, b)][0].get(p, 0) > 0 for b in a.batch)]
        for p in names:
            cells = []
            for b in a.batch:
                by = results[(contact, b)][0]
                tot = sum(by.values())
                cells.append(f"{by.get(p, 0) * 1e6:.1f} ({100 * by.get(p, 0) / tot:.0f} %)")
            print(f"| {p} | " + " | ".join(cells) + " |")
        sums = [sum(results[(contact, b)][0].values()) for b in a.batch]
        walls = [results[(contact, b)][2] for b in a.batch]
        print("| all operations | " + " | ".join(f"{s * 1e6:.1f}" for s in sums) + " |")
        print("| the loop's wall time (thunk runtime) | " + " | ".join(f"{w * 1e6:.1f}" for w in walls) + " |")
        print("| operations per vehicle-step [us] | " + " | ".join(
            f"{s * 1e6 / (2 * b):.2f}" for s, b in zip(sums, a.batch)) + " |")
        b = a.batch[-1]
        print(f"\nThe {a.top} dearest operations at B = {b} ({title}):\n")
        print("| us per step | operation | shape | phase |")
        print("|---|---|---|---|")
        for t, name, shape, p in results[(contact, b)][1][: a.top]:
            print(f"| {t * 1e6:.1f} | {name} | `{shape}` | {p} |")
        out["touching" if contact else "free"] = {str(b): dict(phases=results[(contact, b)][0],
                                                               wall=results[(contact, b)][2]) for b in a.batch}
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
