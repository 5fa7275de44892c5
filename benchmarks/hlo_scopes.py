"""What a study chunk's compiled program is made of: its fusions and dots per `jax.named_scope`.

    python benchmarks/hlo_scopes.py [--study studies/offset.toml] [--batch 16] [--no-contact]

Builds the study's first B scenarios (end time 0.01 s: the program's operations do not depend on it),
compiles `study.runner.run_batch` in a child process with XLA dumping the optimised HLO
(`--xla_dump_to`), times that compile (JAX's `backend_compile_and_load`), and counts the
program's fusions and dots by the outermost named scope in their `op_name` (contact_geometry,
contact_law, trackers, masking; "(none)" for the rest: the vehicles' rates and tires, the
integration, the step control) and, inside each, those in a packed buffer's branch
(`branch_1_fun`, core/control_flow.py). LLVM's time on a loop compiled whole grows faster than
the number of loop nests in it (benchmarks/RESULTS.md), one per fusion or dot.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCOPES = ("contact_geometry", "contact_law", "trackers", "masking")

CHILD = r"""
import dataclasses, sys, warnings
sys.path.insert(0, sys.argv[4])
import jax
from suite_compile import install_compile_timer
compiles = install_compile_timer(min_seconds=0.0)
from jaxmedusa import study as S
from jaxmedusa.study.runner import run_batch
from offset_layers import build_chunk
warnings.filterwarnings("ignore", message=".*runs backwards.*")
study = S.load_study(sys.argv[1])
contact = study.settings.contact and sys.argv[3] == "1"
study.settings = dataclasses.replace(study.settings, end_time=0.01, contact=contact)
batch, state = build_chunk(study, int(sys.argv[2]))
jax.block_until_ready(run_batch(batch, state, study.settings, study.tracker, False)[0])
print("COMPILE", max(c["seconds"] for c in compiles if c["name"] == "jit_run_batch"))
"""


def count(hlo: str) -> dict[tuple[str, bool], int]:
    """{(scope, in a packed buffer's branch): fusions and dots} of an optimised HLO text."""
    counts: dict[tuple[str, bool], int] = collections.Counter()
    for line in hlo.splitlines():
        if not re.search(r"= \S+ (fusion|dot)\(", line):
            continue
        name = re.search(r'op_name="([^"]+)"', line)
        path = name.group(1).split("/") if name else []
        scope = next((p for p in path if p in SCOPES), "(none)")
        counts[(scope, "branch_1_fun" in path)] += 1
    return counts


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--no-contact", action="store_true", help="simulation.contact = false (free driving)")
    args = ap.parse_args(argv)
    dump = tempfile.mkdtemp(prefix="hlo-scopes-")
    env = dict(os.environ, JAXMEDUSA_COMPILE_CACHE="0", JAX_PLATFORMS="cpu",
               XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + f" --xla_dump_to={dump} --xla_dump_hlo_as_text").strip())
    out = subprocess.run([sys.executable, "-c", CHILD, args.study, str(args.batch), "0" if args.no_contact else "1",
                          str(Path(__file__).resolve().parent)], env=env, capture_output=True, text=True, check=True)
    compile_s = float(out.stdout.split("COMPILE")[-1])
    files = sorted(Path(dump).glob("*jit_run_batch*after_optimizations.txt"), key=lambda f: f.stat().st_size)
    counts = count(files[-1].read_text())
    total = sum(counts.values())
    print(f"{Path(args.study).name}, B = {args.batch}, contact {'off' if args.no_contact else 'on'}: XLA compile "
          f"{compile_s:.2f} s, {total} fusions and dots\n")
    print("| scope | fusions and dots | of them in a packed buffer |")
    print("|---|---|---|")
    for scope in (*SCOPES, "(none)"):
        n, inside = counts[(scope, False)] + counts[(scope, True)], counts[(scope, True)]
        if n:
            print(f"| {scope} | {n} | {inside} |")


if __name__ == "__main__":
    main()
