"""Ctrl-C (SIGINT) and SIGTERM for every command: out within a second, exit code 128 + signal
(130 for Ctrl-C, 143 for SIGTERM), never a crash, and what finished kept.

Why not Python's default handler (KeyboardInterrupt)? Python runs a signal handler only in
the main thread, between two bytecodes. During an XLA compile (tens of seconds, in C++),
a jitted call or a `device_get`, the main thread runs no bytecode, so Ctrl-C waited for the
compile to end (18-105 s measured, and a MEDUSA-search sweep ignored it for 60 s); and when
the KeyboardInterrupt then unwound the main thread, the interpreter shut down while XLA's
threads (a compile, the persistent cache's writer, a `jax.debug.callback` of `fit` calling
back into Python) were still running, which crashed with a segmentation fault (exit 139).

Here the C-level signal handler, which runs whatever the main thread is doing, writes the
signal's number to a pipe (`signal.set_wakeup_fd`); a watcher thread blocked on that pipe
wakes up at once (XLA releases the GIL while it compiles or runs), calls the hooks the
command registered (`on_interrupt`: print how to resume, write the samples done so far;
bounded by HOOK_SECONDS), flushes the console and ends the process with `os._exit`: no
interpreter shutdown, so no thread of XLA outlives the interpreter. Files are written
atomically (a hidden temporary renamed into place, io/tables.py), so a write cut short
leaves every earlier file whole.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Callable

__all__ = ["install", "on_interrupt", "HOOK_SECONDS", "EXIT_CODES"]

HOOK_SECONDS = 0.8  # [s] the hooks get at most this long before the process ends anyway
SIGNALS = (signal.SIGINT, signal.SIGTERM)
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}  # 128 + the signal's number, as shells report it

_hooks: list[Callable[[], None]] = []
_installed = [False]


@contextmanager
def on_interrupt(hook: Callable[[], None]):
    """While the block runs, call `hook()` (from the watcher thread) when a signal ends the
    command: it prints what was kept and writes what finished. It must be quick and must
    not wait for the main thread (which may be stuck in a compile)."""
    _hooks.append(hook)
    try:
        yield
    finally:
        _hooks.remove(hook)


def _exit_now(signum: int) -> None:
    code = EXIT_CODES.get(signum, 128 + signum)
    name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
    done = threading.Event()

    def report():  # in a thread of its own: a hook or the console lock can never hold the exit up
        for hook in reversed(list(_hooks)):
            try:
                hook()
            except Exception as exc:  # noqa: BLE001  (a hook's failure must not keep the process alive)
                _say(f"while stopping: {type(exc).__name__}: {exc}")
        _say(f"stopped by {name} (exit code {code})")
        done.set()

    threading.Thread(target=report, daemon=True).start()
    done.wait(HOOK_SECONDS)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _say(text: str) -> None:
    """Print on the commands' console (common.py) once it is loaded, else on stderr: this
    module imports nothing heavy, so that it is in place within milliseconds of the start."""
    common = sys.modules.get("jaxmedusa_cli.common")
    if common is None:
        sys.stderr.write(text + "\n")
        return
    common.console.show_cursor(True)  # a live progress bar hides it
    common.console.print(text, markup=False, highlight=False)


def _watch(fd: int) -> None:
    try:
        while True:
            data = os.read(fd, 1)
            if not data:  # the write end was closed: the command finished
                return
            if data[0] in EXIT_CODES:
                _exit_now(data[0])
    except OSError:
        return
    finally:
        os.close(fd)


def _ignore(signum, frame) -> None:
    """The Python-level handler: nothing to do (the watcher thread acts)."""


def install() -> Callable[[], None] | None:
    """Route SIGINT and SIGTERM to the watcher (module docstring); returns the function that
    restores the previous handlers, or None where signals cannot be handled here (not the
    main thread, e.g. a command called from a worker thread of a test)."""
    if threading.current_thread() is not threading.main_thread() or _installed[0]:
        return None
    _installed[0] = True
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    previous = {s: signal.signal(s, _ignore) for s in SIGNALS}
    previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(read_fd,), name="jaxmedusa-signals", daemon=True).start()

    def restore() -> None:
        _installed[0] = False
        signal.set_wakeup_fd(previous_fd)
        for s, h in previous.items():
            signal.signal(s, h)
        os.close(write_fd)  # the watcher reads end-of-file and returns

    return restore
