"""Where XLA's CPU compile of a time loop goes, by compiler phase and LLVM pass; and LLVM options against it.

    python benchmarks/compile_profile.py                                  # crush-law study, B = 16
    python benchmarks/compile_profile.py --case medusa_search             # the report's offset files
    python benchmarks/compile_profile.py --option=-disable-licm-promotion --option=-inline-threshold=0

Profile (the default): the case's program is compiled in a child process under Linux `perf
record -g` (perf must be installed and allowed to sample: kernel.perf_event_paranoid <= 2),
and `perf report --children` gives, for each phase of the compile, the share of the process's
samples spent in it or below it. The rows are shares of the compile, i.e. of XLA's
`PjRtCpuClient::CompileInternal` (HLO passes, emission), its fusion emitters (the kernels outside
the loop compiled whole, on a thread pool) and the JIT's `IrCompiler` (LLVM's optimisation and
code generation of the rest, on a task thread of its own): three disjoint roots. Rows nest (the
loop passes are part of LLVM's IR passes, `ScalarEvolution::forgetLoop` runs inside the loop passes).

Options (`--option`, repeatable): each is one more LLVM option, added to jaxmedusa's own
`xla_backend_extra_options` (core/xla_flags.py), against jaxmedusa's settings alone; every
setting a fresh process with the compilation cache off, the settings alternating within each
round, the best of the rounds kept (compile times vary by +-15 % between processes on a
small VM). Crush case: the time loop's XLA compile (wall and CPU), its run, and the chunk's
metrics against jaxmedusa's settings' (llvm_unroll.compare); medusa_search: the first call less
the best rerun, the rerun, and the steps and status against jaxmedusa's settings'.

Cases: crush (studies/offset.toml's first `--batch` scenarios, `--end-time` s, the time loop
lowered and compiled alone) and medusa_search (`benchmarks/run_speed.py` on
studies/medusa/offset, 1.1 s: MEDUSA's law with MEDUSA's own contact search; the whole
process is sampled, the shares are still of the compile).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
from jaxmedusa.core.xla_flags import FULL_UNROLL_MAX  # noqa: E402
from compile_levels import CASES  # noqa: E402  (the medusa_search case's command)
from llvm_unroll import CHILD, compare, flags  # noqa: E402  (the crush case's child, its metrics)

# (row label, symbol as perf prints it, nesting level); level 0: the compile's three roots
PHASES = [
    ("XLA: HLO passes, emission, linking", "xla::PjRtCpuClient::CompileInternal", 0),
    ("of which HLO passes", "xla::cpu::CpuCompiler::RunHloPasses", 1),
    ("XLA: fusion emitters (kernels outside the whole loop, on a thread pool)",
     "xla::cpu::ParallelFusionEmitter::CompileFusion", 0),
    ("LLVM: the JIT's module compile (the rest, the time loop included)", "xla::cpu::IrCompiler::operator()", 0),
    ("IR optimisation passes", "xla::cpu::IrCompiler::RunIrPasses", 1),
    ("inlining (always-inline)", "llvm::AlwaysInlinerPass::run", 2),
    ("loop passes", "llvm::FunctionToLoopPassAdaptor::run", 2),
    ("LoopRotate", "llvm::LoopRotatePass::run", 3),
    ("LICM", "llvm::LICMPass::run", 3),
    ("LoopFullUnroll", "llvm::LoopFullUnrollPass::run", 3),
    ("IndVarSimplify", "llvm::IndVarSimplifyPass::run", 3),
    ("(within them) ScalarEvolution::forgetLoop", "llvm::ScalarEvolution::forgetLoop", 3),
    ("(within them) MemorySSA renaming", "llvm::MemorySSA::renamePass", 3),
    ("InstCombine", "llvm::InstCombinePass::run", 2),
    ("LoopVectorize", "llvm::LoopVectorizePass::run", 2),
    ("SLPVectorizer", "llvm::SLPVectorizerPass::run", 2),
    ("machine code (instruction selection, registers)", "xla::cpu::IrCompiler::EmitMachineCode", 1),
]
ROOTS = tuple(symbol for _, symbol, level in PHASES if level == 0)  # on separate threads: disjoint


def child_command(case: str, batch: int, end_time: float, metrics: Path) -> list[str]:
    if case == "crush":
        return [sys.executable, "-c", CHILD, str(ROOT / "studies" / "offset.toml"), str(batch), str(end_time), "1",
                str(HERE), "1", str(metrics)]
    script, *arguments = CASES["medusa_search"]
    return [sys.executable, str(HERE / script), *arguments]


def child_env(extra: str = "") -> dict:
    """jaxmedusa's XLA options (llvm_unroll.flags at FULL_UNROLL_MAX), plus one LLVM option."""
    xla = flags(FULL_UNROLL_MAX) + (f",{extra}" if extra else "")
    return dict(os.environ, XLA_FLAGS=xla, JAXMEDUSA_COMPILE_CACHE="0", JAX_PLATFORMS="cpu")


def children_shares(report: str) -> dict[str, float]:
    """{symbol: children %} from `perf report --children --sort symbol -g none --stdio`."""
    shares = {}
    for line in report.splitlines():  # "  53.86%  0.00%  [.] symbol   <padding>  -  -"
        m = re.match(r"\s*([\d.]+)%\s+[\d.]+%\s+\[\.\] (.+)", line)
        if m:
            symbol = m.group(2).rstrip().removesuffix("-").rstrip().removesuffix("-").rstrip()
            shares.setdefault(symbol, float(m.group(1)))
    return shares


def profile(args, tmp: Path) -> None:
    if shutil.which("perf") is None:
        raise SystemExit("compile_profile.py: Linux perf is not installed (the profile needs it)")
    data = tmp / "perf.data"
    cmd = ["perf", "record", "-g", "-F", str(args.frequency), "-o", str(data), "--"]
    cmd += child_command(args.case, args.batch, args.end_time, tmp / "m.npz")
    proc = subprocess.run(cmd, env=child_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    report = subprocess.run(["perf", "report", "-i", str(data), "--children", "--sort", "symbol", "-g", "none",
                             "--stdio"], capture_output=True, text=True).stdout
    shares = children_shares(report)
    compile_share = sum(shares.get(s, 0.0) for s in ROOTS)
    if compile_share == 0.0:
        raise SystemExit("compile_profile.py: no compile in the profile (was the program cached?)")
    print(f"case {args.case}" + (f", B = {args.batch}, {args.end_time} s" if args.case == "crush" else "")
          + f"; the child's own figures: {row}\n")
    print(f"The compile: {compile_share:.1f} % of the process's samples ({args.frequency} Hz).\n")
    print("| phase | share of the compile |")
    print("|---|---|")
    for label, symbol, level in PHASES:  # the nesting as leading dots (Markdown drops spaces)
        print(f"| {'. ' * level}{label} | {100.0 * shares.get(symbol, 0.0) / compile_share:.0f} % |")


def options(args, tmp: Path) -> None:
    settings = [""] + list(args.options)
    best: dict = {}
    for r in range(args.rounds):
        for extra in settings:
            out = tmp / f"m_{settings.index(extra)}_{r}.npz"
            cmd = child_command(args.case, args.batch, args.end_time, out)
            if args.case == "crush":
                cmd[-2] = str(args.repeats)
            else:
                cmd += ["--repeats", str(args.repeats)]
            proc = subprocess.run(cmd, env=child_env(extra), capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(proc.stderr[-2000:])
            raw = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"round {r + 1} {extra or 'jaxmedusa'}: {raw}", file=sys.stderr, flush=True)
            if args.case == "crush":
                row = {k: raw[k] for k in ("compile", "compile_cpu", "run")}
            else:  # run_speed.py: the first call (trace, compile, run) and the best rerun
                row = {"compile": raw["first"]["wall"] - raw["best_rerun"]["wall"], "compile_cpu": raw["first"]["cpu"],
                       "run": raw["best_rerun"]["wall"]}
            prev = best.get(extra)
            best[extra] = dict(row) if prev is None else {k: min(prev[k], row[k]) for k in row}
            best[extra]["metrics"] = dict(np.load(out)) if args.case == "crush" else \
                {"steps": np.asarray(raw["first"]["steps"]), "status": np.asarray(raw["first"]["status"])}
    ref = best[""]
    what = f"crush-law study, B = {args.batch}, {args.end_time} s" if args.case == "crush" else \
        "studies/medusa/offset, 1.1 s (compile: first call less the rerun; CPU: the first call's)"
    print(f"{what}, best of {args.rounds} rounds\n")
    print("| LLVM option added | XLA compile [s] (CPU [s]) | run [s] | results against jaxmedusa's settings |")
    print("|---|---|---|---|")
    for extra in settings:
        row = best[extra]
        print(f"| {extra or '(none: jaxmedusa settings)'} | {row['compile']:.2f} ({row['compile_cpu']:.2f}) | "
              f"{row['run']:.3f} | {'-' if not extra else compare(ref['metrics'], row['metrics'])} |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=("crush", "medusa_search"), default="crush")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--end-time", type=float, default=1.0)
    ap.add_argument("--frequency", type=int, default=499, help="perf's sampling rate [Hz]")
    ap.add_argument("--option", action="append", default=None, dest="options",
                    help="an LLVM option to compare (repeatable; write --option=-name=value)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2, help="timed runs per process (the best is kept)")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="compile-profile-"))
    try:
        if args.options:
            options(args, tmp)
        else:
            profile(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
