"""The `jaxmedusa` command line (installed as the package jaxmedusa_cli): app.py builds the
Typer app from one module per command group (run_commands, study_commands).

XLA's C++ log lines ("Very slow compile? If you want to file a bug ...", printed when a
compile passes a few seconds) are hidden unless TF_CPP_MIN_LOG_LEVEL is set: the commands
announce their compiles themselves, with an estimate (compile_notice.py), and a long compile
is expected, not a bug. Set here, before jaxlib is imported, because XLA reads it once.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

if os.path.basename(sys.argv[0] if sys.argv else "") == "jaxmedusa":  # the installed command, not an import
    from jaxmedusa_cli.interrupt import install as _install  # signals handled from here on, imports included

    _install()
