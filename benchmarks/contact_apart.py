"""What contact costs a step while the cars are apart, part by part.

    python benchmarks/contact_apart.py --batch 256
    PYTHONPATH=TREE python TREE/benchmarks/contact_apart.py ...   # another tree (its own path first)

The crush-law offset study's first B scenarios as built (the cars 2 m apart: no pair passes
the broad phase), each part compiled alone in a loop of `--iterations` evaluations whose every
evaluation feeds the last one's result back (benchmarks/step_profile.py's `looped`), best of
`--reps`: the batched step with contact on and off (no tracker), the predictor alone, the
enclosing-sphere test, the predictor with the box test, the batch's contact geometry
(`contact.stage.batch_geometry`: broad phase, packed buffer, far-apart defaults), with the
law's terms (`batch_law_terms`) and with the rest of the contact stage. Each row includes
the loop's own cost (the predictor's row is about that). Prints microseconds per step and per
scenario-step.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from jaxmedusa import study as S  # noqa: E402
from jaxmedusa.contact.broad_phase import boxes_overlap  # noqa: E402
from jaxmedusa.contact.crash import with_barriers  # noqa: E402
from jaxmedusa.contact.stage import SKIP_RADIUS_FACTOR, batch_geometry, batch_law_terms, contact_stage  # noqa: E402
from jaxmedusa.core.state import pair_indices  # noqa: E402
from jaxmedusa.solver.simulate import _step_batch  # noqa: E402
from jaxmedusa.solver.step import predict  # noqa: E402
from offset_layers import build_chunk  # noqa: E402
from step_profile import best_time, looped  # noqa: E402


def parts(settings):
    """{name: function of dyn = dict(batch, state)}."""
    off = dataclasses.replace(settings, contact=False)

    def step(s_):
        def f(d):
            s = d["state"]
            return _step_batch(d["batch"], (s, None), s.clock.t < s_.end_time, s_, None)[0]
        return f

    def pairs(x):
        a, b = pair_indices(x.shape[1])
        return x[:, a], x[:, b]

    def spheres(d):
        r, _ = jax.vmap(predict)(d["state"])
        radius = SKIP_RADIUS_FACTOR * jnp.linalg.norm(d["batch"].vehicle.contact_axes, axis=-1)
        (r1, r2), (q1, q2) = pairs(r), pairs(radius)
        return jnp.linalg.norm(r2 - r1, axis=-1) < q1 + q2, r

    def boxes(d):
        r, F = jax.vmap(predict)(d["state"])
        Bm = F * d["batch"].vehicle.contact_axes[:, :, None, :]
        (r1, r2), (B1, B2) = pairs(r), pairs(Bm)
        flat = lambda x: x.reshape((-1,) + x.shape[2:])  # noqa: E731  (as contact.stage calls it)
        return boxes_overlap(flat(r1), flat(B1), flat(r2), flat(B2)), r

    def geometry(d):
        s = d["state"]
        r, F = jax.vmap(predict)(s)
        return batch_geometry(d["batch"], r, F, s.pairs.warm, settings), r, F

    def law(d):
        s = d["state"]
        g, r, F = geometry(d)
        return batch_law_terms(d["batch"], g, s.pairs, r, F, s.vehicles.v, s.vehicles.W, settings), g

    def stage(d):
        s = d["state"]
        g, r, F = geometry(d)
        terms = batch_law_terms(d["batch"], g, s.pairs, r, F, s.vehicles.v, s.vehicles.W, settings)

        def one(bi, st, rp, Fp, gg, lt):
            t, p, c, info, failed = contact_stage(bi, rp, Fp, st.vehicles.v, st.vehicles.W, st.pairs, settings, gg, lt)
            return with_barriers(bi, st, rp, Fp, c, info, settings), t, p, failed
        return jax.vmap(one)(d["batch"], s, r, F, g, terms)

    return {"step, contact on": step(settings), "step, contact off": step(off),
            "predictor": lambda d: jax.vmap(predict)(d["state"]), "spheres": spheres, "boxes": boxes,
            "geometry": lambda d: geometry(d)[0], "geometry + law": law, "geometry + law + stage": stage}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    study = S.load_study(a.study)
    batch, state = build_chunk(study, a.batch)
    print(f"{study.name}: B = {a.batch}, {study.settings.contact_law} law, the cars as built (apart)\n")
    print("| part | us per step | us per scenario-step |")
    print("|---|---|---|")
    for name, f in parts(study.settings).items():
        t = best_time(looped(f, a.iterations), (dict(batch=batch, state=state), jnp.float64(0.0)), a.reps)
        t /= a.iterations
        print(f"| {name} | {t * 1e6:.1f} | {t * 1e6 / a.batch:.3f} |", flush=True)


if __name__ == "__main__":
    main()
