"""jaxmedusa: MEDUSA's platoon driving and collision dynamics as batched JAX kernels."""
import jax

# MEDUSA's director strains are ~1e-5 and positions ~100 m move ~1e-3 m per step:
# float64 is the default (DESIGN.md, "Data model").
jax.config.update("jax_enable_x64", True)

__version__ = "0.1.0"
