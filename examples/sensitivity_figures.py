"""The figures of docs/sensitivity.md (matplotlib; small PNGs under docs/figures/).

    python examples/sensitivity_figures.py sobol results/offset_sobol-sobol/sensitivity.parquet
    python examples/sensitivity_figures.py fd          # derivative vs finite differences, both laws

"sobol": bars of S1 and ST with their 95 % intervals, one panel per output.
"fd": d(vehicle 2's final speed)/d(lateral offset) of the short offset collision of
tests/data/sens_offset.toml at 6 offsets, by forward mode and by central differences with
h = 1e-3, 1e-4, 1e-5 m, under the physical law (fixed steps) and MEDUSA's law and step
control. One forward-mode run per law computes values at x, x +- h and the derivatives.
"""
from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import jaxmedusa  # noqa: E402,F401
from jaxmedusa.analysis.outcomes import Outcomes, summarize_batch  # noqa: E402
from jaxmedusa.build import build_batch  # noqa: E402
from jaxmedusa.core.params import Settings  # noqa: E402
from jaxmedusa.core.pytree import replace  # noqa: E402
from jaxmedusa.io.scenario_toml import load_scenario  # noqa: E402
from jaxmedusa.solver.simulate import simulate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIG = ROOT / "docs" / "figures"
HS = (1e-3, 1e-4, 1e-5)


def sobol_bars(path: str):
    t = pq.read_table(path).to_pandas()
    outs = list(dict.fromkeys(t["output"]))
    fig, axes = plt.subplots(1, len(outs), figsize=(2.3 * len(outs), 2.6), sharey=True)
    for ax, out in zip(np.atleast_1d(axes), outs):
        d = t[t["output"] == out]
        params = list(dict.fromkeys(d[d["index"] == "S1"]["parameter"]))
        x = np.arange(len(params))
        for k, (idx, off) in enumerate((("S1", -0.18), ("ST", 0.18))):
            e = d[d["index"] == idx].set_index("parameter").loc[params]
            ax.bar(x + off, e["value"], 0.36, yerr=e["conf"], capsize=2, label=idx)
        ax.set_xticks(x, [p.replace("_", "\n") for p in params], fontsize=6)
        ax.set_title(out, fontsize=8)
        ax.axhline(0, color="k", lw=0.5)
    np.atleast_1d(axes)[0].legend(fontsize=7)
    np.atleast_1d(axes)[0].set_ylabel("Sobol' index (95 % CI)", fontsize=8)
    fig.tight_layout()
    FIG.mkdir(parents=True, exist_ok=True)
    fig.savefig(FIG / "offset_sobol.png", dpi=90)


def _derivatives(law: str, control: str, ys):
    base, _ = load_scenario(ROOT / "studies" / "medusa" / "offset")
    v1, v2 = base.vehicles
    import dataclasses

    v2 = dataclasses.replace(v2, x=4.3, speed=19.0)
    sc = dataclasses.replace(base, vehicles=[v1, v2])
    dt = 2e-4 if control == "constant" else 5e-5
    settings = Settings(end_time=0.3, dt=dt, contact_law=law, step_control=control)
    pts = [y + s * h for y in ys for h in (0.0,) + HS for s in ((1,) if h == 0 else (1, -1))]
    batch, state = build_batch([sc] * len(pts), dt=dt, n_vehicles=2)
    tr = Outcomes()

    def f(y):
        st = replace(state, vehicles=replace(state.vehicles, r=state.vehicles.r.at[:, 1, 1].set(y)))
        res = simulate(batch, st, settings, tracker=tr, record=False)
        return summarize_batch(batch, res.final, res.metrics, tr)["final_speed"][:, 1]

    val, tan = jax.jit(lambda y: jax.jvp(f, (y,), (jnp.ones_like(y),)))(jnp.asarray(pts))
    val, tan = np.asarray(val).reshape(len(ys), -1), np.asarray(tan).reshape(len(ys), -1)
    fd = np.stack([(val[:, 1 + 2 * j] - val[:, 2 + 2 * j]) / (2 * h) for j, h in enumerate(HS)], 1)
    return tan[:, 0], fd


def fd_figure():
    ys = np.array([0.25, 0.4, 0.55, 0.7, 0.85, 1.0])
    fig, axes = plt.subplots(1, 2, figsize=(7, 2.8))
    rows = []
    for ax, (law, control) in zip(axes, (("physical", "constant"), ("medusa", "medusa"))):
        ad, fd = _derivatives(law, control, ys)
        ax.plot(ys, ad, "ko-", label="forward mode")
        for j, h in enumerate(HS):
            ax.plot(ys, fd[:, j], "x--", label=f"FD h={h:g} m")
        ax.set_title(f"{law} law, {control} step control", fontsize=8)
        ax.set_xlabel("lateral offset y [m]", fontsize=8)
        ax.set_yscale("symlog", linthresh=0.1)
        rows += [(law, y, a, *f) for y, a, f in zip(ys, ad, fd)]
    axes[0].set_ylabel("d(v2 final speed)/dy [(m/s)/m]", fontsize=8)
    axes[1].legend(fontsize=6)
    fig.tight_layout()
    FIG.mkdir(parents=True, exist_ok=True)
    fig.savefig(FIG / "derivatives_fd.png", dpi=90)
    for r in rows:
        print(f"{r[0]:9s} y={r[1]:.2f} forward {r[2]:+.4f}  FD " + " ".join(f"{x:+.4f}" for x in r[3:]))


if __name__ == "__main__":
    if sys.argv[1] == "sobol":
        sobol_bars(sys.argv[2])
    else:
        fd_figure()
