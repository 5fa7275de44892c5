"""The simulator as a function of every sampled parameter: the fit's unknowns, then the
nuisance model parameters (spec.py), with a choice of derivative mode.

    problem = InferProblem(spec, adjoint="forward")   # or "checkpointed" (reverse mode)
    r = problem.residuals(theta)                      # theta (n,), r (m,) = (model - data) / sigma

fit.problem.FitProblem sets the fit's unknowns in the built arrays; this class then sets
the nuisance parameters, inside JAX so that gradients reach them:

- `tires.friction` = mu, the peak tire-road friction coefficient at the reference load
  Fz0 = 1573 * 9.81 / 4 N (the offset cars' static wheel load, the load at which the Fiala
  tire's mu_p was matched to CALSPAN, physics/tire/fiala.py). CALSPAN: the surface's skid
  number sn_p = sn_t mu / mu0(Fz0) with mu0 of eq (1.20) at sn_p = sn_t, so that eq (1.20)
  gives mu at Fz0 (the peak still falls with load as in the report); Fiala: mu_p = mu and
  mu_s scaled by mu / mu_p (the slide-to-peak ratio kept).
- `vehicles.N.crush_scale` = k multiplies vehicle N's Campbell coefficients crush_a, crush_b
  (every face) of the crush law (contact/laws/crush.py): stiffness uncertain by a factor.
- `vehicles.N.mass` = m [kg] replaces vehicle N's mass; its inertia parameters my (eq 1.9)
  are scaled by m / m_file, i.e. the mass is added or removed in proportion everywhere, the
  radii of gyration kept (a loaded or lighter car of the same layout). The initial state
  stays the file's EQUILIBRIUM block, computed for the file's mass: a car heavier by dm
  starts off its static equilibrium and sinks by dm g / (sum of spring rates), oscillating
  (about 6 mm for 100 kg on the offset cars' four 40 kN/m springs, damping ratio ~0.17,
  settled in about a second). A lighter car has faster chassis modes: the step must suit the
  prior's low end (the report's 1573 kg car at constant 2 ms steps diverges below about
  1100 kg, at 0.5 ms it runs down to 600 kg). Other parameters that
  an investigator would tie to the mass (crush stiffness, tire rated load) are left as they are.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.pytree import replace
from jaxmedusa.fit.problem import FitProblem
from jaxmedusa.infer.spec import InferSpec

__all__ = ["InferProblem", "REFERENCE_WHEEL_LOAD"]

REFERENCE_WHEEL_LOAD = 1573.0 * 9.81 / 4.0  # [N], Fz0 of physics/tire/fiala.py


def _with_friction(params, mu):
    """A tire model's parameter pytree (leaves [B, V]) whose peak friction at Fz0 is mu."""
    if hasattr(params, "sn_p"):  # CALSPAN, eq (1.20): mu0 = (b1 Fz + b3 + b4 Fz^2) sn_p / sn_t
        f = REFERENCE_WHEEL_LOAD
        base = params.b1 * f + params.b3 + params.b4 * f * f
        return replace(params, sn_p=params.sn_t * mu / base)
    if hasattr(params, "mu_p"):  # Fiala
        return replace(params, mu_p=jnp.broadcast_to(mu, params.mu_p.shape),
                       mu_s=params.mu_s * mu / params.mu_p)
    raise ValueError(f"tires.friction: tire parameters {type(params).__name__} have no friction to set")


class InferProblem(FitProblem):
    """FitProblem over theta = (fit unknowns, nuisance parameters); `adjoint` as
    solver.simulate's ("forward": a while loop, forward-mode derivatives; "checkpointed":
    a checkpointed scan, reverse mode too)."""

    def __init__(self, spec: InferSpec, adjoint: str = "forward"):
        super().__init__(spec.fit)
        self.infer_spec = spec
        self.adjoint = adjoint
        self.n_fit = len(spec.fit.unknowns)

    @property
    def n_parameters(self) -> int:
        return self.n_fit + len(self.infer_spec.nuisance)

    @property
    def theta0(self) -> np.ndarray:
        return np.asarray(self.infer_spec.initial, float)

    def apply(self, theta):
        batch, state = super().apply(theta[:self.n_fit])
        for j, n in enumerate(self.infer_spec.nuisance):
            value = theta[self.n_fit + j]
            veh = batch.vehicle
            if n.kind == "friction":
                tire = replace(veh.tire, params=tuple(_with_friction(p, value) for p in veh.tire.params))
                veh = replace(veh, tire=tire)
            elif n.kind == "mass":  # mass [B, V], inertia parameters my [B, V, 3]
                scale = jnp.ones(veh.mass.shape).at[:, n.vehicle].set(value / veh.mass[:, n.vehicle])
                veh = replace(veh, mass=veh.mass * scale, my=veh.my * scale[..., None])
            else:  # crush_scale of one vehicle (leaves [B, V, 3])
                k = jnp.ones(veh.crush_a.shape[:2]).at[:, n.vehicle].set(value)[..., None]
                veh = replace(veh, crush_a=veh.crush_a * k, crush_b=veh.crush_b * k)
            batch = replace(batch, vehicle=veh)
        return batch, state

    def max_steps(self):
        """The checkpointed loop's length: every constant step to end_time and MEDUSA's one
        past it (t > end_time), + 1 for round-off (extra steps are masked no-ops)."""
        s = self.spec.settings
        return int(round(s.end_time / s.dt)) + 2 if self.adjoint == "checkpointed" else None
