"""Cosserat-point chassis with suspension and tires: the rates of one vehicle, eqs (1.1)-(1.34).

Everything here is for a single vehicle (no batch axis); `solver/step.py` lifts it with vmap.
Directors are the columns of F (F = d_i (x) E_i) and director velocities the columns of W.
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.params import GRAVITY, VehicleParams, inertia_parameters
from jaxmedusa.core.scenario import KEYWORD_FIELDS, ModelSpec, axle_problems, crush_problems, model_problems
from jaxmedusa.core.vector_math import atan2, sincos
from jaxmedusa.physics.road import road_frame
from jaxmedusa.physics.friction import road_friction
from jaxmedusa.physics.tire import tire_forces_and_sliding, tire_friction, tire_set
from jaxmedusa.physics.wheel_controls import controlled_forces

FREE_ROLLING_SPEED = 0.1  # init.c: driven = |TIRE_SPEED| > 0.1 [m/s]
# Below this in-plane wheel speed [m/s] the slip angle is taken as 0, as C's atan2(0, 0) gives
# at exact rest. Round-off velocities (~1e-12 m/s) of a car at rest would otherwise flip the
# sign of v.e_x and drive the lagged slip angle towards +-pi, pushing a parked car sideways.
# Never reached in a moving vehicle; see docs/medusa-notes.md.
STANDSTILL_SPEED = 1e-6


class Rates(NamedTuple):
    """Time derivatives of one vehicle's state (contact terms not included)."""

    dr: jnp.ndarray  # (3,) = v
    dF: jnp.ndarray  # (3, 3) = W
    dv: jnp.ndarray  # (3,) acceleration [m/s^2]
    dW: jnp.ndarray  # (3, 3) director accelerations [1/s^2]
    dalpha: jnp.ndarray  # (4,) lagged slip-angle rates [rad/s]


class WheelInfo(NamedTuple):
    """Per-wheel quantities of one vehicle at one step (leaves (4, ...); [V, 4, ...] in
    solver.step.StepInfo.wheels), for in-run trackers and outputs."""

    fz: jnp.ndarray  # (4,) suspension force magnitudes, eq (1.17), 0 when lifted [N]
    fx: jnp.ndarray  # (4,) longitudinal tire forces [N]
    fy: jnp.ndarray  # (4,) lateral tire forces [N]
    point: jnp.ndarray  # (4, 3) tire contact points: the assembly points projected on the road plane [m]
    power: jnp.ndarray  # (4,) power of the in-plane tire force on the vehicle, f . v_q [W] (> 0 only when driven)
    # (4,) bool, EDC's skid flag: the loaded tire slides over its whole contact patch, in its
    # model's terms (physics.tire TireModel.sliding: Fiala's full-sliding regime psi >= 3 mu Fz;
    # CALSPAN's composite slip sigma >= 3 pi/4 of eq (1.22), the same point for a brush tire of
    # equal initial slope), or its wheel is locked; False for a lifted wheel.
    sliding: jnp.ndarray


def intrinsic_director_forces(F, lam, tm):
    """k^i of eq (1.12) as columns of a (3, 3) array [N].

    lam = V*lambda/2, tm = V*mu (init.c). k^i = lam*(d_j.d_j - 3) d_i + tm*(d_i.d_n - delta_in) d_n.
    """
    C = F.T @ F  # C[i, n] = d_i . d_n
    strain = C - jnp.eye(3)
    return lam * jnp.trace(strain) * F + tm * F @ strain


def viscous_director_forces(F, W, lam, tm, beta):
    """Structural damping of the chassis, as columns of a (3, 3) array [N] added to k^i of eq (1.12).

    Not in MEDUSA. Kelvin-Voigt damping proportional to the stiffness: the strain-rate part of
    dk/dt times beta [s], k_v = beta F (lam tr(C') I + tm C'), C' = dC/dt = F^T W + W^T F (W the
    director velocities). C' vanishes for a rigid rotation (W = Omega F, Omega skew), so only
    deformation is damped; the dissipated power sum_i k_v^i . w_i = beta (lam tr(C')^2 + tm C':C') / 2
    is never negative; linearised about the undeformed state it is the stiffness matrix times beta,
    so an elastic mode of angular frequency omega gets the damping ratio beta omega / 2.
    """
    rate = F.T @ W + W.T @ F
    return beta * (lam * jnp.trace(rate) * F + tm * F @ rate)


def chassis_frequencies(p: VehicleParams) -> np.ndarray:
    """(6,) angular frequencies [rad/s] of the chassis's elastic modes, ascending: eq (1.12)'s
    director forces linearised about the undeformed state (dk = 2 lam tr(e) I + 2 tm e, e the
    symmetric part of dF), against the inertia parameters my of eq (1.30); the three rigid
    rotations (zero frequency) left out. The report's model 1: 50.6, 91.5, 133, 138, 156, 258 Hz."""
    lam, tm, my = float(p.lam), float(p.tm), np.asarray(p.my, float)
    K = np.zeros((9, 9))
    for j in range(9):
        dF = np.zeros(9)
        dF[j] = 1.0
        e = dF.reshape(3, 3)
        e = e + e.T
        K[:, j] = (lam * np.trace(e) * np.eye(3) + tm * e).reshape(-1)
    M_inv = np.repeat(1.0 / my[None, :], 3, axis=0).reshape(-1)  # column i of dW is divided by my^i
    w2 = np.sort(np.linalg.eigvals(M_inv[:, None] * K).real)
    return np.sqrt(np.maximum(w2[3:], 0.0))


def chassis_damping_limit(p: VehicleParams, dt: float) -> float:
    """The largest chassis damping beta [s] (viscous_director_forces) that the step of eq (1.52)
    integrates stably at steps up to dt [s].

    The step on a mode x'' = -omega^2 x - beta omega^2 x' (predict x~ = x + dt v, then v += dt a(x~,
    v), x += dt v_old) has the amplification matrix [[1, dt], [-dt w2, 1 - dt^2 w2 - dt beta w2]],
    w2 = omega^2, with determinant 1 - dt beta w2 and trace 2 - dt^2 w2 - dt beta w2; both
    eigenvalues lie in the unit disc while w2 dt (dt + 2 beta) <= 4 (Jury's conditions). The
    undamped step needs omega dt <= 2 (1.23 ms for the report's car); damping lowers that."""
    w2 = float(chassis_frequencies(p)[-1]) ** 2
    return max(0.5 * (4.0 / (w2 * dt) - dt), 0.0)


def stored_energy(F, lam, tm):
    """m*psi of eq (1.34) [J]: V/2 (lambda eps_jj^2 + 2 mu eps_mn eps_mn), eps = (d_i.d_j - delta_ij)/2."""
    strain = F.T @ F - jnp.eye(3)
    return 0.25 * (lam * jnp.trace(strain) ** 2 + tm * jnp.sum(strain * strain))


def wheel_headings(F, e3, steer, n_wheels=4):
    """Heading and lateral unit vectors (n_wheels, 3) of the wheels, eqs (1.14)-(1.15).

    Rear wheels follow d1 projected on the road plane; the front wheels are turned by the
    steering angle `steer` [rad], positive to the left. e_y = e_z x e_x with e_z = -e3.
    """
    d1 = F[:, 0]
    ex_rear = d1 - jnp.dot(d1, e3) * e3  # eq (1.14)
    ex_rear = ex_rear / jnp.linalg.norm(ex_rear)
    ey_rear = jnp.cross(-e3, ex_rear)
    s, c = sincos(steer)  # vector arithmetic, not the C library per element (core/vector_math.py)
    ex_front = c * ex_rear - s * ey_rear  # eq (1.15): e_x^3 x e_3 = -e_y^3
    ey_front = s * ex_rear + c * ey_rear
    rear = n_wheels - 2  # the front axle steers; every further axle follows d1
    ex = jnp.stack([ex_front, ex_front] + [ex_rear] * rear)
    ey = jnp.stack([ey_front, ey_front] + [ey_rear] * rear)
    return ex, ey


def vehicle_rates(p: VehicleParams, road, r, F, v, W, alpha_lag, alpha_rate, seg, s, steer, tire_speed, tires=True,
                  controls=None, zones=None):
    """Rates of one vehicle as vehicle.c `equations_of_motion()` computes them.

    r, F: (predicted) positions and directors; v, W: velocities; alpha_lag (4,) lagged slip
    angles; alpha_rate (4,) the previous slip-angle rates (kept for lifted wheels, whose rate
    vehicle.c leaves untouched); steer [rad] and tire_speed [m/s] the driver inputs at t;
    controls: None, or (brake, lock, throttle) arrays (4,) at t (physics/wheel_controls.py);
    zones: None, or the scenario's core.params.ZoneParams (physics/friction.py).
    Returns (Rates, WheelInfo, (seg, s, off_road)).
    """
    with jax.named_scope("road"):
        frame, seg, s, off_road = road_frame(road, r, seg, s)
    e3 = frame.e3
    ex, ey = wheel_headings(F, e3, steer, p.X.shape[0])

    Xq = p.X  # (4, 3) material coordinates of the assembly points, eq (1.11)
    vq = v + Xq @ W.T  # (4, 3) assembly-point velocities, eq (1.18)
    vq_n = vq @ e3
    vt = vq - vq_n[:, None] * e3  # projection into the road plane, eq (1.18)
    rq = r + Xq @ F.T  # (4, 3) assembly points, eq (1.2)
    deflection = (rq - frame.point) @ e3
    fz = -(p.C * (deflection - p.spring_ref) + p.D * vq_n)  # eq (1.17)
    if p.equalise is not None:  # tandem axles share their load (trucks; compiled out for cars)
        fz = p.equalise @ fz
    loaded = fz > 0.0  # wheel lift-off: no force when Fz <= 0

    vx = jnp.sum(vt * ex, axis=1)
    vy = jnp.sum(vt * ey, axis=1)
    standstill = vx * vx + vy * vy < STANDSTILL_SPEED**2
    alpha = jnp.where(standstill, 0.0, atan2(vy, jnp.where(standstill, 1.0, vx)))  # eq (1.19)
    n_wheels = p.X.shape[0]  # 4 for MEDUSA's car: FL, FR, RL, RR, then further axles (left, right)
    driven = (jnp.abs(tire_speed) > FREE_ROLLING_SPEED) & (jnp.arange(n_wheels) < 2)  # TIRE_SPEED: front axle
    vx_safe = jnp.where(vx == 0.0, 1.0, vx)
    slip = jnp.where(driven & (vx != 0.0), 1.0 - tire_speed / vx_safe, jnp.where(driven, -1.0, 0.0))  # eq (1.19)
    point = rq - deflection[:, None] * e3  # contact points on the road
    with jax.named_scope("tires"):
        if tires:
            # friction zones (compiled out without them): the road's friction under each tire
            mu_road = None if zones is None else road_friction(zones, point[:, :2], tire_friction(p.tire, fz))
            # lagged slip angle replaces alpha (Remark 4); the skid flag from the forces' own slip terms
            fx, fy, sliding = tire_forces_and_sliding(p.tire, fz, alpha_lag, slip, mu_road)
            if controls is not None:  # brake, lock, throttle (compiled out when the batch has none)
                mu_peak, mu_slide = tire_friction(p.tire, fz) if mu_road is None else mu_road
                brake, lock, throttle = controls
                fx, fy, sliding = controlled_forces(fx, fy, sliding, fz, vx, vy, mu_peak, mu_slide, brake, lock,
                                                    throttle, p.rolling_resistance)
            sliding = loaded & sliding
        else:
            fx = fy = jnp.zeros(n_wheels)
            sliding = jnp.zeros(n_wheels, bool)
    fx = jnp.where(loaded, fx, 0.0)
    fy = jnp.where(loaded, fy, 0.0)
    fz = jnp.where(loaded, fz, 0.0)
    dalpha = jnp.where(loaded, p.tau_inv * (alpha - alpha_lag), alpha_rate)  # eq (1.27) as vehicle.c codes it

    f_road = fx[:, None] * ex - fy[:, None] * ey  # in-plane part of eq (1.16)
    fq = f_road + fz[:, None] * e3  # eq (1.16), -Fz e_z = Fz e3
    l0 = jnp.sum(fq, axis=0) - jnp.array([0.0, 0.0, p.mass * GRAVITY])  # eq (1.10)
    li = fq.T @ Xq  # (3, 3): column i = sum_q X_q^i f^q, eq (1.10)
    k = intrinsic_director_forces(F, p.lam, p.tm)
    if p.chassis_damping is not None:  # structural damping (compiled out for MEDUSA's undamped chassis)
        k = k + viscous_director_forces(F, W, p.lam, p.tm, p.chassis_damping)
    # eq (1.30): z2' = M^-1 (A f - k + u); vehicle.c multiplies by the inverse mass matrix.
    dv = l0 * (1.0 / p.mass)
    dW = (li - k) * (1.0 / p.my)
    rates = Rates(dr=v, dF=W, dv=dv, dW=dW, dalpha=dalpha)
    wheels = WheelInfo(fz=fz, fx=fx, fy=fy, point=point, power=jnp.sum(f_road * vt, axis=1),
                       sliding=sliding)
    return rates, wheels, (seg, s, off_road)


def energy_medusa(p: VehicleParams, r, F, v, W):
    """Total energy as vehicle.c `energy()` computes it [J]: eq (1.33) WITHOUT the
    translational kinetic energy m v.v/2 (its kinetic loop starts at index 4), and with the
    spring energy measured from z = 0 (eq 1.34)."""
    t_dir = 0.5 * jnp.sum(p.my * jnp.sum(W * W, axis=0))
    rq3 = r[2] + p.X @ F[2, :]  # vertical coordinate of each assembly point
    stretch = rq3 - p.spring_ref
    if p.equalise is None:
        v_springs = 0.5 * jnp.sum(p.C * stretch**2)
    else:  # equalised tandems: the potential of the shared force E (C dz), 0.5 dz . E (C dz) (equal C in a group)
        v_springs = 0.5 * jnp.dot(stretch, p.equalise @ (p.C * stretch))
    return t_dir + stored_energy(F, p.lam, p.tm) + v_springs + p.mass * GRAVITY * r[2]


def energy_total(p: VehicleParams, r, F, v, W):
    """Total energy E of eqs (1.33)-(1.34) in full [J] (MEDUSA's figure plus m v.v/2)."""
    return energy_medusa(p, r, F, v, W) + 0.5 * p.mass * jnp.dot(v, v)


def model_wheels(model: ModelSpec) -> int:
    """Wheels of a vehicle model: two per axle (FL, FR, RL, RR, then further axles)."""
    return 2 * model.n_axles


def wheel_layout(model: ModelSpec, n_wheels: int):
    """(X (n_wheels, 3) [m], C, D (n_wheels,), equalise (n_wheels, n_wheels)) of a model:
    eq (1.11)'s assembly points axle by axle (left, right), padded with wheels at the centre
    of mass that have no spring (never loaded). equalise averages the spring forces of each
    side over a group of equalised axles (core.scenario.AxleSpec.equalised)."""
    m = model
    axles = [(m.l1, m.track, m.h1, m.c1, m.d1, False), (-m.l2, m.track, m.h2, m.c2, m.d2, False)]
    axles += [(-a.l, a.track, a.h, a.c, a.d, a.equalised) for a in m.extra_axles]
    X, C, D = np.zeros((n_wheels, 3)), np.zeros(n_wheels), np.zeros(n_wheels)
    for k, (x, track, h, c, d, _) in enumerate(axles):
        X[2 * k] = (x, 0.5 * track, -h)  # left
        X[2 * k + 1] = (x, -0.5 * track, -h)  # right
        C[2 * k: 2 * k + 2], D[2 * k: 2 * k + 2] = c, d
    E = np.eye(n_wheels)
    groups, group = [], [0]
    for k in range(1, len(axles)):
        if axles[k][5]:
            group.append(k)
        else:
            groups.append(group)
            group = [k]
    groups.append(group)
    for g in groups:
        for side in (0, 1):
            idx = [2 * k + side for k in g]
            E[np.ix_(idx, idx)] = 1.0 / len(idx)
    return X, C, D, E


def _wheel_tires(model: ModelSpec, tire: dict | None, tire_models, n_wheels: int):
    """TireSet whose parameters are arrays (n_wheels,): each axle's tires (ModelSpec.tires_by_axle
    over `tire`), padding wheels those of the last axle."""
    per_axle = []
    for k in range(model.n_axles):
        extra = model.tires_by_axle[k] if model.tires_by_axle else {}
        per_axle.append(tire_set(model.tire_model, {**(tire or {}), **(extra or {})} or None, tire_models))
    axle_of = [min(i // 2, model.n_axles - 1) for i in range(n_wheels)]
    params = tuple(jax.tree.map(lambda *xs: np.asarray([xs[a] for a in axle_of], dtype=np.float64),
                                *[ts.params[j] for ts in per_axle]) for j in range(len(per_axle[0].params)))
    return dataclasses.replace(per_axle[0], params=params)


def vehicle_params(model: ModelSpec, tire: dict | None = None, tire_models: tuple[str, ...] | None = None,
                   n_wheels: int | None = None, damped: bool | None = None) -> VehicleParams:
    """VehicleParams for one ModelSpec, computed as init.c `read_models()` does. `tire`
    overrides parameters of the model's tire model (ModelSpec.tire_model, default Goodyear
    185SR14 for "calspan"); `tire_models` are the tire models present in the batch
    (default: just this one), see core.params.TireSet. `n_wheels`: the wheel count of the
    batch when it holds a vehicle with more than two axles or per-axle tires (build.py); the
    parameters then have that many wheels, tire parameters per wheel and a load equaliser.
    None (with a two-axle model without per-axle tires): MEDUSA's four wheels, exactly.
    `damped`: whether the batch carries structural damping (ModelSpec.chassis_damping; None:
    where this model has it), so that one batch has one structure.
    An impossible model (core.scenario.model_problems) raises ValueError naming the field."""
    problems = model_problems(model)
    if problems:
        kw, reason = problems[0]
        raise ValueError(f"ModelSpec.{KEYWORD_FIELDS[kw]} ({kw}): {reason}")
    for fld, reason in crush_problems(model)[:1] + axle_problems(model)[:1]:
        raise ValueError(f"ModelSpec.{fld}: {reason}")
    m = model
    if n_wheels is None and (m.extra_axles or m.tires_by_axle):
        n_wheels = model_wheels(m)
    if n_wheels is not None and n_wheels < model_wheels(m):
        raise ValueError(f"n_wheels {n_wheels} < the model's {model_wheels(m)} wheels")
    X, C, D, E = wheel_layout(m, n_wheels or 4)  # eq (1.11)
    f = lambda x: np.asarray(x, dtype=np.float64)  # noqa: E731  (numpy: cheap to stack for big batches)
    tires = tire_set(model.tire_model, tire, tire_models) if n_wheels is None else \
        _wheel_tires(m, tire, tire_models, n_wheels)
    return VehicleParams(
        mass=f(m.mass),
        my=f(inertia_parameters(m.ix, m.iy, m.iz)),
        # init.c: lam = 0.5*vol*E*nu/(1+nu)/(1-2*nu), tm = 0.5*vol*E/(1+nu)
        lam=f(0.5 * m.volume * m.young * m.nu / (1 + m.nu) / (1 - 2 * m.nu)),
        tm=f(0.5 * m.volume * m.young / (1 + m.nu)),
        X=f(X),
        spring_ref=f(m.spring_ref),
        C=f(C),
        D=f(D),
        tau_inv=f(1.0 / m.tire_lag),
        contact_axes=f(0.5 * np.asarray(m.contact_dims, dtype=float)),
        eq_r3=f(m.eq_r3),
        eq_F=f(np.asarray(m.eq_F, dtype=float)),
        tire=tires,
        crush_a=f([m.crush_a_front, m.crush_a_rear, m.crush_a_side]),  # contact/laws/crush.py face order
        crush_b=f([m.crush_b_front, m.crush_b_rear, m.crush_b_side]),
        rolling_resistance=f(m.rolling_resistance),
        equalise=None if n_wheels is None else f(E),
        chassis_damping=f(m.chassis_damping) if (m.chassis_damping != 0.0 if damped is None else damped) else None,
    )
