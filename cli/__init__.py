"""The `jaxmedusa` command line (installed as the package jaxmedusa_cli): app.py builds the
Typer app from one module per command group (run_commands, study_commands)."""
