"""What a study's first chunk pays to compile, and what XLA's CPU optimisation options trade.

    python benchmarks/compile_levels.py --batch 64          # the crush-law offset study

Each option set runs in a fresh process with the compilation cache off: one chunk of the
study's first B scenarios (compile and run: the first call), then the same chunk again (run
only). The process records JAX's own compile-phase durations
(jax.monitoring: tracing, lowering to StableHLO, XLA's backend compile) and writes the first
chunk's metrics, which are compared with the default options' bit for bit.

Option sets (added to jaxmedusa's own XLA options, core/xla_flags.py):
  default                                  XLA's CPU defaults
  --xla_backend_optimization_level=1 / 0   LLVM's optimisation level for the generated code
  --xla_llvm_disable_expensive_passes=true the slow LLVM passes off
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OPTIONS = ["", "--xla_backend_optimization_level=1", "--xla_backend_optimization_level=0",
           "--xla_llvm_disable_expensive_passes=true"]

CHILD = r"""
import json, sys, time
import jax, numpy as np
import jax.monitoring as mon
import jaxmedusa
from jaxmedusa import study as S
from jaxmedusa.study.runner import run_batch
sys.path.insert(0, sys.argv[4])
from offset_layers import build_chunk
phases = {}
mon.register_event_duration_secs_listener(lambda e, d, **k: phases.__setitem__(e, phases.get(e, 0.0) + d))
study = S.load_study(sys.argv[1])
batch, state = build_chunk(study, int(sys.argv[2]))
def run():
    t = time.perf_counter()
    m, _ = run_batch(batch, state, study.settings, study.tracker, study.outputs.trajectories)
    m = jax.device_get(m)
    return time.perf_counter() - t, m
first, metrics = run()
second, _ = run()
np.save(sys.argv[3], np.concatenate([np.ravel(np.asarray(x, float)) for x in jax.tree.leaves(metrics)]))
print(json.dumps({"first": first, "second": second,
                  "trace": phases.get("/jax/core/compile/jaxpr_trace_duration", 0.0),
                  "lower": phases.get("/jax/core/compile/jaxpr_to_mlir_module_duration", 0.0),
                  "backend": phases.get("/jax/core/compile/backend_compile_duration", 0.0)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="compile-levels-"))
    rows, base = [], None
    for k, opt in enumerate(OPTIONS):
        env = dict(os.environ, XLA_FLAGS=opt, JAXMEDUSA_COMPILE_CACHE="0", JAX_PLATFORMS="cpu")
        out = tmp / f"metrics_{k}.npy"
        proc = subprocess.run([sys.executable, "-c", CHILD, args.study, str(args.batch), str(out),
                               str(Path(__file__).resolve().parent)], env=env,
                              capture_output=True, text=True, check=True)
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        m = np.load(out)
        if base is None:
            base, same = m, "-"
        elif np.array_equal(base, m, equal_nan=True):
            same = "the same bits"
        else:
            rel = np.abs(m - base) / np.maximum(np.abs(base), 1e-300)
            same = f"max rel. difference {np.nanmax(rel):.1e}"
        rows.append((opt or "default", row, same))
    print(f"| options | first chunk (compile + run) [s] | tracing [s] | lowering [s] | XLA backend compile [s] "
          f"| the same chunk again (run) [s] | metrics against default |")
    print("|---|---|---|---|---|---|---|")
    for opt, r, same in rows:
        print(f"| {opt} | {r['first']:.1f} | {r['trace']:.1f} | {r['lower']:.1f} | {r['backend']:.1f} | "
              f"{r['second']:.2f} | {same} |")


if __name__ == "__main__":
    main()
