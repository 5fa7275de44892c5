"""jaxmedusa: MEDUSA's platoon driving and collision dynamics as batched JAX kernels.

Packages, bottom to top (each imports only those above it in this list):
core (types, Status, registries, safe math), physics (one vehicle: chassis, driver, road,
tire), contact (types, shapes, laws, stage), solver (step, step control, the one loop,
trackers), build (scenarios -> batch), analysis (outcomes, events, equilibrium), io (MEDUSA
files, TOML, validation, tables), run (one scenario), study (sweeps). See docs/architecture.md.
"""
from jaxmedusa.core import xla_flags

# Before JAX starts its backend: loops compiled whole, not dispatched op by op (core/xla_flags.py)
xla_flags.apply()

import jax  # noqa: E402

# MEDUSA's director strains are ~1e-5 and positions ~100 m move ~1e-3 m per step:
# float64 is the default (docs/numerics.md, "Precision").
jax.config.update("jax_enable_x64", True)

__version__ = "0.1.0"
