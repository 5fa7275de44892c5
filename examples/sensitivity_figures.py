"""The figures of docs/sensitivity.md (matplotlib; small PNGs under docs/figures/).

    python examples/sensitivity_figures.py sobol results/offset_sobol-sobol/sensitivity.parquet
    python examples/sensitivity_figures.py fd          # derivative vs finite differences, both laws
    python examples/sensitivity_figures.py sobol PATH --out DIR   # the figure into DIR instead
    python examples/sensitivity_figures.py fd --out DIR           # likewise

"sobol": bars of S1 and ST with their 95 % intervals, one panel per output.
"fd": d(vehicle 2's final speed)/d(lateral offset) of a short offset collision (vehicle 2
0.3 m clear of vehicle 1, 3 m/s slower, 0.3 s) at 6 offsets, by forward mode and by central
differences with h = 1e-3, 1e-4, 1e-5 m: the physical law with and without its dashpot
(fixed steps of 2e-4 s) and MEDUSA's law and step control. One forward-mode run per law
computes values at y, y +- h and the derivatives.
"""
from __future__ import annotations

import dataclasses
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


def sobol_bars(path: str, folder: Path = FIG) -> Path:
    """Bars of S1 and ST of a sensitivity.parquet (`jaxmedusa sensitivity --method sobol`) into
    folder/offset_sobol.png; returns its path."""
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
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fig.savefig(folder / "offset_sobol.png", dpi=90)
    plt.close(fig)
    return folder / "offset_sobol.png"


def _derivatives(law: str, control: str, ys, dampings=(None,)):
    """Forward-mode d(v2 final speed)/dy and central differences at HS, per damping [N s/m]
    (None: the default): (forward [n_damping, n_y], FD [n_damping, n_y, len(HS)])."""
    base, _ = load_scenario(ROOT / "studies" / "medusa" / "offset")
    v1, v2 = base.vehicles
    v2 = dataclasses.replace(v2, x=4.3, speed=19.0)
    sc = dataclasses.replace(base, vehicles=[v1, v2])
    dt = 2e-4 if control == "constant" else 5e-5
    # the analytic shape: derivatives through contact need it (the MEDUSA law's default shape,
    # medusa_search, has none; docs/medusa-search.md)
    settings = Settings(end_time=0.3, dt=dt, contact_law=law, contact_geometry="superellipsoid", step_control=control)
    offs = [0.0] + [s * h for h in HS for s in (1, -1)]
    pts = [(c, y + o) for c in dampings for y in ys for o in offs]
    contact = [{} if c is None else {"damping": c} for c, _ in pts]
    batch, state = build_batch([sc] * len(pts), dt=dt, n_vehicles=2, contact=contact)
    tr = Outcomes(damage=False, rest=False)  # final_speed alone: the damage and rest trackers stay out of the loop

    def f(y):
        st = replace(state, vehicles=replace(state.vehicles, r=state.vehicles.r.at[:, 1, 1].set(y)))
        res = simulate(batch, st, settings, tracker=tr, record=False)
        return summarize_batch(batch, res.final, res.metrics, tr)["final_speed"][:, 1]

    y = jnp.asarray([p[1] for p in pts])
    val, tan = jax.jit(lambda y: jax.jvp(f, (y,), (jnp.ones_like(y),)))(y)
    shape = (len(dampings), len(ys), len(offs))
    val, tan = np.asarray(val).reshape(shape), np.asarray(tan).reshape(shape)
    fd = np.stack([(val[..., 1 + 2 * j] - val[..., 2 + 2 * j]) / (2 * h) for j, h in enumerate(HS)], -1)
    return tan[..., 0], fd


YS = (0.25, 0.4, 0.55, 0.7, 0.85, 1.0)  # [m], the figure's offsets


def fd_panels(ys=YS) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The figure's three panels: (title, forward mode [n_y], central differences [n_y, len(HS)])."""
    ys = np.asarray(ys, float)
    ad, fd = _derivatives("physical", "constant", ys, dampings=(None, 0.0))
    panels = [("physical law (dashpot 1e4 N s/m), fixed dt", ad[0], fd[0]),
              ("physical law without dashpot, fixed dt", ad[1], fd[1])]
    ad, fd = _derivatives("medusa", "medusa", ys)
    panels.append(("MEDUSA law and step control", ad[0], fd[0]))
    return panels


def fd_figure(ys=YS, folder: Path = FIG) -> tuple[Path, list]:
    """folder/derivatives_fd.png of fd_panels(ys), and the panels; prints one line per point."""
    ys = np.asarray(ys, float)
    panels = fd_panels(ys)
    fig, axes = plt.subplots(1, 3, figsize=(10, 2.9), sharey=True)
    for ax, (title, a, f) in zip(axes, panels):
        ax.plot(ys, a, "ko-", label="forward mode")
        for j, h in enumerate(HS):
            ax.plot(ys, f[:, j], "x--", label=f"FD h={h:g} m")
        ax.set_title(title, fontsize=8)
        ax.set_xlabel("lateral offset y [m]", fontsize=8)
        ax.set_yscale("symlog", linthresh=0.1)
        for y, x, row in zip(ys, a, f):
            print(f"{title:45s} y={y:.2f} forward {x:+.4f}  FD " + " ".join(f"{v:+.4f}" for v in row), flush=True)
    axes[0].set_ylabel("d(v2 final speed)/dy [(m/s)/m]", fontsize=8)
    axes[-1].legend(fontsize=6)
    fig.tight_layout()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fig.savefig(folder / "derivatives_fd.png", dpi=80)
    plt.close(fig)
    return folder / "derivatives_fd.png", panels


if __name__ == "__main__":
    if sys.argv[1] == "sobol":
        sobol_bars(sys.argv[2], *(sys.argv[4:5] if sys.argv[3:4] == ["--out"] else []))
    else:
        fd_figure(folder=sys.argv[3] if sys.argv[2:3] == ["--out"] else FIG)
