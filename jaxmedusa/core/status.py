"""Scenario status: one enumeration, stored as int32 in the state and in output tables.

`Status.OK` (0) is success; every other value says why a scenario stopped. A failed
scenario keeps its last good state; the others in its batch run on. `label` is the short
name written to tables (`status_name` column) and `message` the sentence the CLI prints.
"""
from __future__ import annotations

from enum import IntEnum

__all__ = ["Status", "status_label"]


class Status(IntEnum):
    """Why a scenario stopped (0: it did not). Values are stored in `ScenarioClock.status`."""

    OK = 0
    NAN = 1
    OFF_ROAD = 2
    CONTACT_NOT_CONVERGED = 3
    ENERGY_GAIN = 10  # set after the run (jaxmedusa.run): energy beyond the drivers' work; the run was not stopped

    @property
    def label(self) -> str:
        """Short name used in tables and summaries, e.g. "off_road"."""
        return self.name.lower()

    @property
    def message(self) -> str:
        """One sentence for people."""
        return _MESSAGES[self]


_MESSAGES = {
    Status.OK: "ran to the end time",
    Status.NAN: "a state component became NaN or infinite",
    Status.OFF_ROAD: "a vehicle left the road's range (MEDUSA exits there)",
    Status.CONTACT_NOT_CONVERGED: "the contact-point solver residual exceeded its tolerance while in contact",
    Status.ENERGY_GAIN: "ran to the end, but the total energy rose above the initial energy plus the drivers' work "
                        "by more than the margin (physically impossible: the contact law created energy)",
}


def status_label(code: int) -> str:
    """Label of a stored status code; unknown codes read 'code<N>'."""
    try:
        return Status(int(code)).label
    except ValueError:
        return f"code{int(code)}"
