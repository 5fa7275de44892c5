"""How fast `jaxmedusa` stops on Ctrl-C (SIGINT) or SIGTERM, compile included, cold cache.

    python benchmarks/interrupt_latency.py                 # the cases below, each in a fresh process
    python benchmarks/interrupt_latency.py --quick         # only the first case

Each case starts a command with an empty compile cache (JAXMEDUSA_COMPILE_CACHE=<new
folder>) in an empty working folder, sends the signal after DELAY seconds and prints the
exit code, the seconds from the signal to the end of the process, and the last lines of
its output. Issue 33 (2-core CPU): `fit` segfaulted (exit 139) 18-21 s after SIGINT,
`run studies/medusa/evade` 105 s after; a MEDUSA-search sweep ignored it for 60 s.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
S = ROOT / "studies"
# (label, signal, delay [s], arguments)
CASES = [
    ("run offset, during the compile", signal.SIGINT, 6.0, ["run"]),
    ("run evade (medusa_search), during the compile", signal.SIGINT, 20.0, ["run", S / "medusa" / "evade", "-t", "0.5"]),
    ("fit, during the compile", signal.SIGINT, 20.0, ["fit", S / "fit_offset.toml"]),
    ("sweep medusa_spread, during the first chunk", signal.SIGINT, 40.0, ["sweep", S / "medusa_spread.toml"]),
    ("run offset, SIGTERM during the compile", signal.SIGTERM, 6.0, ["run"]),
    ("start-up (imports)", signal.SIGINT, 0.3, ["run"]),
]


def command() -> list[str]:
    script = Path(sys.executable).parent / "jaxmedusa"
    return [str(script)] if script.exists() else [sys.executable, "-m", "jaxmedusa_cli.app"]


def measure(sig, delay: float, args) -> tuple[int, float, str]:
    env = dict(os.environ, JAXMEDUSA_COMPILE_CACHE=tempfile.mkdtemp(prefix="cold-cache-"), JAX_PLATFORMS="cpu")
    p = subprocess.Popen(command() + [str(a) for a in args], env=env, cwd=tempfile.mkdtemp(prefix="work-"),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(delay)
    t0 = time.monotonic()
    p.send_signal(sig)
    try:
        out, _ = p.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    return p.returncode, time.monotonic() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    for label, sig, delay, args in CASES[:1] if a.quick else CASES:
        rc, latency, out = measure(sig, delay, args)
        print(f"{label}: {signal.Signals(sig).name} at {delay:g} s -> exit {rc} after {latency:.2f} s")
        print("   " + "\n   ".join(out.strip().splitlines()[-3:]))


if __name__ == "__main__":
    main()
