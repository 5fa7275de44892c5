"""Parameter pytrees: vehicle model, tire, driver inputs, contact law; and simulation settings.

Every array field of a per-vehicle pytree has leading axes [batch, vehicle] once batched
(`build.py` stacks them). Field shapes below are for one vehicle.
"""
from __future__ import annotations

from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np

from .pytree import pytree_dataclass
from .scenario import ModelSpec

GRAVITY = 9.81  # [m/s^2], vehicle.c hard-codes 9.81


@pytree_dataclass
class TireParams:
    """CALSPAN/STI tire parameters, eqs (1.20)-(1.26). Scalars per tire (all four tires alike).

    a0 [N], a1 [-], a2 [N], b1 [1/N], b3 [-], b4 [1/N^2], cs_fz [-], sn_t, sn_p [-],
    fz_t [lbs], t_w [in], t_p [psi] (non-SI as in the report), k_mu [-], c1..c4 [-].
    """

    a0: jnp.ndarray
    a1: jnp.ndarray
    a2: jnp.ndarray
    b1: jnp.ndarray
    b3: jnp.ndarray
    b4: jnp.ndarray
    cs_fz: jnp.ndarray
    sn_t: jnp.ndarray
    sn_p: jnp.ndarray
    fz_t: jnp.ndarray
    t_w: jnp.ndarray
    t_p: jnp.ndarray
    k_mu: jnp.ndarray
    c1: jnp.ndarray
    c2: jnp.ndarray
    c3: jnp.ndarray
    c4: jnp.ndarray


# Goodyear 185SR14, eqs (1.24)-(1.26), with the digits of vehicle.c's #defines.
GOODYEAR_185SR14 = dict(
    a0=7092.7808,  # 1583.21*4.48
    a1=11.94,
    a2=13571.0848,  # 3029.26*4.48
    b1=-0.0000254464285714286,  # -1.140E-04/4.48
    b3=1.007,
    b4=-5.2913743622449e-11,  # -1.062E-09/4.48/4.48
    cs_fz=18.0,
    sn_t=85.0,
    sn_p=85.0,
    fz_t=1160.0,
    t_w=5.0,
    t_p=28.0,
    k_mu=0.2,
    c1=0.535,
    c2=1.05,
    c3=1.15,
    c4=0.8,
)


def tire_params(values: dict | None = None) -> TireParams:
    """TireParams from a dict of floats (default: Goodyear 185SR14)."""
    v = dict(GOODYEAR_185SR14)
    if values:
        unknown = set(values) - set(v)
        if unknown:
            raise ValueError(f"unknown tire parameter(s) {sorted(unknown)}; expected {sorted(v)}")
        v.update(values)
    return TireParams(**{k: np.asarray(float(x)) for k, x in v.items()})


@pytree_dataclass
class VehicleParams:
    """One vehicle model, in the form the equations of motion use.

    mass [kg]; my (3,) inertia parameters my^11, my^22, my^33 of eq (1.9) [kg m^2];
    lam = V*lambda/2 and tm = V*mu [N m] (init.c `lam`, `tm`, eqs 1.12-1.13);
    X (4, 3): material coordinates X_q^i of the suspension assembly points, eq (1.11) [m];
    spring_ref [m]; C (4,) [N/m]; D (4,) [N s/m]; tau_inv = 1/TIRE [1/s];
    contact_axes (3,): semi-axes of the contact superellipsoid, half of CONTACT A1 A2 A3 [m];
    eq_r3 [m] and eq_F (3, 3): the EQUILIBRIUM block (columns are directors);
    crush_a (3,) [N/m], crush_b (3,) [N/m^2]: Campbell coefficients of the front, rear and
    side faces (crush law, crush_law.py).
    """

    mass: jnp.ndarray
    my: jnp.ndarray
    lam: jnp.ndarray
    tm: jnp.ndarray
    X: jnp.ndarray
    spring_ref: jnp.ndarray
    C: jnp.ndarray
    D: jnp.ndarray
    tau_inv: jnp.ndarray
    contact_axes: jnp.ndarray
    eq_r3: jnp.ndarray
    eq_F: jnp.ndarray
    tire: TireParams
    crush_a: jnp.ndarray
    crush_b: jnp.ndarray


def inertia_parameters(ix: float, iy: float, iz: float) -> np.ndarray:
    """my^11, my^22, my^33 from the principal moments J0^11, J0^22, J0^33: inverse of eq (1.9)."""
    return 0.5 * np.array([-ix + iy + iz, ix - iy + iz, ix + iy - iz])


def lame_constants(young: float, nu: float) -> tuple[float, float]:
    """Lame constants (lambda, mu) from E and nu, eq (1.13)."""
    return young * nu / ((1 + nu) * (1 - 2 * nu)), young / (2 * (1 + nu))


def vehicle_params(model: ModelSpec, tire: dict | None = None) -> VehicleParams:
    """VehicleParams for one ModelSpec, computed as init.c `read_models()` does."""
    m = model
    X = np.array(
        [
            [m.l1, 0.5 * m.track, -m.h1],  # left front
            [m.l1, -0.5 * m.track, -m.h1],  # right front
            [-m.l2, 0.5 * m.track, -m.h2],  # left rear
            [-m.l2, -0.5 * m.track, -m.h2],  # right rear
        ]
    )  # eq (1.11)
    f = lambda x: np.asarray(x, dtype=np.float64)  # noqa: E731  (numpy: cheap to stack for big batches)
    return VehicleParams(
        mass=f(m.mass),
        my=f(inertia_parameters(m.ix, m.iy, m.iz)),
        # init.c: lam = 0.5*vol*E*nu/(1+nu)/(1-2*nu), tm = 0.5*vol*E/(1+nu)
        lam=f(0.5 * m.volume * m.young * m.nu / (1 + m.nu) / (1 - 2 * m.nu)),
        tm=f(0.5 * m.volume * m.young / (1 + m.nu)),
        X=f(X),
        spring_ref=f(m.spring_ref),
        C=f([m.c1, m.c1, m.c2, m.c2]),
        D=f([m.d1, m.d1, m.d2, m.d2]),
        tau_inv=f(1.0 / m.tire_lag),
        contact_axes=f(0.5 * np.asarray(m.contact_dims, dtype=float)),
        eq_r3=f(m.eq_r3),
        eq_F=f(np.asarray(m.eq_F, dtype=float)),
        tire=tire_params(tire),
        crush_a=f([m.crush_a_front, m.crush_a_rear, m.crush_a_side]),
        crush_b=f([m.crush_b_front, m.crush_b_rear, m.crush_b_side]),
    )


@pytree_dataclass
class DriverParams:
    """Driver time tables for one vehicle (K knots, padded by repeating the last knot).

    steer_times, steer_values (K,): steering angle [rad]; steer_linear: 1.0 for piecewise
    linear, 0.0 for piecewise constant. speed_*: front tire circumferential speed
    R*omega [m/s] (TIRE_SPEED); |speed| <= 0.1 means free-rolling front wheels.
    """

    steer_times: jnp.ndarray
    steer_values: jnp.ndarray
    steer_linear: jnp.ndarray
    speed_times: jnp.ndarray
    speed_values: jnp.ndarray
    speed_linear: jnp.ndarray


@pytree_dataclass
class ContactParams:
    """Contact law parameters (per scenario). p1 [1/s^2 per m] and p2 [1/s] are MEDUSA's
    penalty multipliers (vehicle.c CONSTRAINT_MULTIPLIER1/2); stiffness [N/m] and damping
    [N s/m] belong to the physical law; eps1, eps2 are the squareness exponents.
    Crush law (crush_law.py, docs/crash-law.md): mu, mu_barrier [-] Coulomb friction between
    vehicles and against barriers; v_slip [m/s] stick-slip regularisation speed; crush_rate
    [s/m] rate factor zeta; unload_exp [-] unloading exponent n (>= 1); width_min [m] least
    engaged width."""

    p1: jnp.ndarray
    p2: jnp.ndarray
    stiffness: jnp.ndarray
    damping: jnp.ndarray
    eps1: jnp.ndarray
    eps2: jnp.ndarray
    mu: jnp.ndarray
    mu_barrier: jnp.ndarray
    v_slip: jnp.ndarray
    crush_rate: jnp.ndarray
    unload_exp: jnp.ndarray
    width_min: jnp.ndarray


CRUSH_CONTACT_DEFAULTS = dict(mu=0.5, mu_barrier=0.3, v_slip=0.1, crush_rate=0.01, unload_exp=14.0, width_min=0.1)


def contact_params(p1=2e4, p2=100.0, stiffness=1e6, damping=1e4, eps1=0.4, eps2=0.4, **crush) -> ContactParams:
    """ContactParams from floats; `crush` overrides CRUSH_CONTACT_DEFAULTS."""
    unknown = set(crush) - set(CRUSH_CONTACT_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown contact parameter(s) {sorted(unknown)}")
    c = {**CRUSH_CONTACT_DEFAULTS, **crush}
    f = lambda x: np.asarray(float(x))  # noqa: E731
    return ContactParams(p1=f(p1), p2=f(p2), stiffness=f(stiffness), damping=f(damping), eps1=f(eps1), eps2=f(eps2),
                         **{k: f(v) for k, v in c.items()})


@dataclass(frozen=True)
class Settings:
    """Static simulation settings (hashable: a change recompiles).

    end_time, dt, save_every [s] mirror MEDUSA's -t, -d, -s. dt_min, shrink, grow and
    hold_steps are main.c's step-size control (DT_MIN, 1.4641, 1.1, just_reduced=100).
    tires=False switches tire forces off (for energy checks). contact_law: "medusa",
    "physical" or "crush" (the crush law always takes the constant step dt: no shrink on
    contact); contact_geometry: "superellipsoid", "ellipsoid" or "box".
    """

    end_time: float = 1.0
    dt: float = 5e-5
    save_every: float = 0.01
    dt_min: float = 5e-6
    shrink: float = 1.4641
    grow: float = 1.1
    hold_steps: int = 100
    tires: bool = True
    contact: bool = True
    contact_law: str = "medusa"
    contact_geometry: str = "superellipsoid"

    @property
    def n_samples(self) -> int:
        """Upper bound on saved samples per scenario (main.c saves when t - t_old >= 0.999999*s)."""
        return int(np.floor(self.end_time / (0.999999 * self.save_every) + 1e-9)) + 1
