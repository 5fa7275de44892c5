"""How XLA's CPU compiler runs the time loop: compiled whole, or dispatched operation by operation.

jaxmedusa asks XLA to compile every while loop whole (core/xla_flags.py): the loop becomes
one function, each step's fused operations nested loops inside it. That is the fastest way
to run a step on a CPU, and the slowest to compile: LLVM's loop passes over one function
with hundreds of inner loops grow faster than the function (benchmarks/RESULTS.md, "What
XLA's CPU compile of a time loop spends its time on"). A crush-law step with contact has
about 650 fused operations, and compiling its loop whole takes 20-35 s on a 2-core CPU.

`settings.time_loop = "dispatched"` keeps the time loop on XLA's thunk runtime instead: each
fused operation is compiled as a function of its own and the runtime calls them one after
the other every step. The same program then compiles in about 40 % of the time, and a step
with contact takes 1.4-1.8 times as long (the dispatch of ~650 operations a step). So it
pays where a process compiles once and runs little: a cold study of a few hundred
scenarios (study/loop_choice.py decides for studies). Inner loops (the narrow phase's
search, the road's lookups) are still compiled whole, inside their operation.

How: XLA's small-while-loop hoisting pass (xla/service/cpu/small_while_loop_hoisting_pass.cc
in jaxlib 0.10) leaves on the thunk runtime any loop that contains a sort. The dispatched
loop carries a two-element int32 token, sorted every step, which its condition reads (so
that XLA cannot remove it as dead). The token costs one tiny operation a step; it holds 0s
and 1s only, so its test never fails and it never overflows. The step itself is the same
computation; its code is compiled per operation instead of across them, so results differ in
the last bits, which a collision amplifies as any change of generated code (1e-12 to 1e-9
relative in most of the offset study's metrics, 3e-7 in the final yaw rate after 3 s).

Only the forward while loop has the two forms. The checkpointed scan of reverse-mode
derivatives is always compiled whole. On a GPU the form makes no difference that matters
(one more small kernel a step), and a study there always takes "whole".
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["TIME_LOOPS", "while_loop"]

TIME_LOOPS = ("whole", "dispatched")


def while_loop(cond, body, carry, form: str = "whole"):
    """jax.lax.while_loop(cond, body, carry) in the given form (module docstring; static)."""
    if form == "whole":
        return jax.lax.while_loop(cond, body, carry)
    if form != "dispatched":
        raise ValueError(f"time_loop must be one of {', '.join(TIME_LOOPS)}, got {form!r}")

    def cond_dispatched(c):
        return cond(c[0]) & (c[1][0] >= 0)  # the token's test: always true, but XLA cannot tell

    def body_dispatched(c):
        return body(c[0]), jax.lax.sort(1 - c[1])  # the sort keeps the loop off XLA's hoisting pass

    return jax.lax.while_loop(cond_dispatched, body_dispatched, (carry, jnp.zeros(2, jnp.int32)))[0]
