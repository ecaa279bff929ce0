"""The one kind of error a person running DriftLab is shown as it is: its message is one line per problem,
saying what is wrong and what to do. The command line prints such errors and exits 2; anything else is a
bug and keeps its traceback."""

from __future__ import annotations


class UserError(Exception):
    """A problem the person running DriftLab can fix (a world file, a setting, a locked or full database, a
    model server that is down, a folder that cannot be written)."""
