"""Simulation-based calibration figures of `jaxmedusa infer` (docs/inference.md), and the
linear-Gaussian comparison.

    python benchmarks/infer_calibration.py --case free --replications 200 --warmup 80 --draws 58 --thin 2
    python benchmarks/infer_calibration.py --case contact --replications 100 --warmup 100 --draws 99 --bins 10
    python benchmarks/infer_calibration.py --case toy

free: one vehicle of the straight example, 0.02 s in 10 steps, speed ~ normal(21, 1) m/s, x
observed (sigma 0.02 m), no contact (the problem of tests/infer/test_calibration.py).
contact: the 8 km/h rigid-barrier impact under the crush law (studies/medusa/barrier, 0.45 s
at constant 1 ms steps: the car meets the wall 0.3 m ahead, the whole pulse and the
rebound), speed ~ truncated normal(2.2, 0.3; 1.5, 3) m/s unknown (at 1.5 m/s the pulse is
over by 0.4 s), its x and speed at 0.45 s observed (sigma 1 cm, 0.05 m/s). At 1 ms these
differ from 0.4 ms steps by at most 1.5 mm and 5 mm/s over the prior's range (tried at
1.5, 1.8, 2.2, 2.6, 3.0 m/s), well inside the sigmas; the rebound speed is not monotonic
in the impact speed (0.46, 0.58, 0.54, 0.37, 0.37 m/s at those speeds: the crush law's
restitution falls with speed), x at the end resolves it.
toy: the linear-Gaussian problem of tests/infer/test_linear_gaussian.py: histograms of the
draws over the closed-form densities.
Writes docs/figures/infer_sbc_<case>.png (rank histograms with the uniform's 99 % band) or
docs/figures/infer_toy.png, and prints the chi-square p-values and 90 % coverage.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def sbc(case: str, a) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy import stats

    from jaxmedusa.infer import infer_from_dict
    from jaxmedusa.infer.calibration import CALIBRATION_PROBLEMS, calibrate
    spec = infer_from_dict(CALIBRATION_PROBLEMS[case], base_dir=ROOT / "studies")
    begin = time.perf_counter()
    cal = calibrate(spec, a.replications, a.warmup, a.draws, a.thin, a.bins, a.seed)
    wall = time.perf_counter() - begin
    names = spec.names
    result = {"case": case, "replications": a.replications, "warmup": a.warmup, "draws": a.draws, "thin": a.thin,
              "L": cal.n_draws, "bins": a.bins, "chi2_p": dict(zip(names, cal.chi2_p.tolist())),
              "coverage90": dict(zip(names, cal.coverage90.tolist())), "divergent": cal.divergent,
              "draws_total": cal.draws_total, "failed": cal.failed, "wall_s": wall}
    print(json.dumps(result, indent=1))
    keep = np.ones(len(cal.ranks), bool)
    n_kept = int(keep.sum()) - cal.failed
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.2), squeeze=False)
    expect = n_kept / a.bins
    lo, hi = stats.binom.ppf([0.005, 0.995], n_kept, 1 / a.bins)
    for j, (ax, name) in enumerate(zip(axes[0], names)):
        counts = np.bincount(cal.ranks[:, j] * a.bins // (cal.n_draws + 1), minlength=a.bins)
        ax.bar(np.arange(a.bins), counts, width=0.9, color="tab:blue")
        ax.axhspan(lo, hi, color="0.85", zorder=0, label="99 % band of a uniform")
        ax.axhline(expect, color="k", lw=0.8)
        ax.set_title(f"{name}: chi2 p = {cal.chi2_p[j]:.2f}, 90 % coverage {cal.coverage90[j]:.2f}", fontsize=9)
        ax.set_xlabel(f"rank bin (L = {cal.n_draws}, {a.bins} bins)")
        ax.set_ylabel("replications")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"SBC, {case}: {a.replications} replications,\n{a.warmup} warmup + {a.draws} draws (thin {a.thin})",
                 fontsize=10)  # two lines: one parameter's figure is 4.2 in wide
    fig.tight_layout()
    out = ROOT / "docs" / "figures" / f"infer_sbc_{case}.png"
    fig.savefig(out, dpi=110)
    result["ranks"] = {n: cal.ranks[:, j].tolist() for j, n in enumerate(names)}  # to redraw without a rerun
    (ROOT / "docs" / "figures" / f"infer_sbc_{case}.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


def toy() -> None:
    import jax
    import jax.numpy as jnp
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy import stats

    import sys
    sys.path.insert(0, str(ROOT / "tests" / "infer"))
    from test_linear_gaussian import A, PRIORS, SIGMA, Y

    from jaxmedusa.infer.likelihood import log_likelihood
    from jaxmedusa.infer.sampler import sample
    m0 = np.array([p.params[0] for p in PRIORS])
    S0inv = np.diag([1 / p.params[1] ** 2 for p in PRIORS])
    cov = np.linalg.inv(S0inv + A.T @ A / SIGMA**2)
    mean = cov @ (S0inv @ m0 + A.T @ Y / SIGMA**2)

    def log_density(u):
        prior = sum(p.log_pdf(p.to_x(u[j])) + p.log_jacobian(u[j]) for j, p in enumerate(PRIORS))
        return prior + log_likelihood((jnp.asarray(A) @ u - Y) / SIGMA, np.full(4, SIGMA))

    d = jax.jit(lambda k, u0: sample(log_density, u0, k, 300, 1000))(jax.random.PRNGKey(3), jnp.zeros((4, 2)))
    th = np.asarray(d.position).reshape(-1, 2)
    fig, axes = plt.subplots(1, 2, figsize=(8, 3))
    for j, ax in enumerate(axes):
        sd = np.sqrt(cov[j, j])
        x = np.linspace(mean[j] - 4 * sd, mean[j] + 4 * sd, 200)
        ax.hist(th[:, j], bins=50, density=True, color="tab:blue", alpha=0.6, label="NUTS, 4 x 1000 draws")
        ax.plot(x, stats.norm.pdf(x, mean[j], sd), "k", label="closed form")
        ax.set_xlabel(f"theta_{j + 1}")
        ax.set_title(f"mean {th[:, j].mean():.4f} vs {mean[j]:.4f}; sd {th[:, j].std():.4f} vs {sd:.4f}", fontsize=8)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    out = ROOT / "docs" / "figures" / "infer_toy.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=("free", "contact", "toy"), default="free")
    ap.add_argument("--replications", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=80)
    ap.add_argument("--draws", type=int, default=39)
    ap.add_argument("--thin", type=int, default=1)
    ap.add_argument("--bins", type=int, default=5)
    ap.add_argument("--seed", type=int, default=3)
    a = ap.parse_args()
    toy() if a.case == "toy" else sbc(a.case, a)


if __name__ == "__main__":
    main()
