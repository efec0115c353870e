"""A build's sample rows as the parsers make them: one tuple per row, columns at the end.

Both parsers (output.xml and UTI JSON) add rows here; ``samples_table`` turns the columns into
the store's Arrow table. A tuple per row, not a dict: a dict per row and a per-column pass over
the dicts cost a quarter of a CSIT build's parse.
"""

from __future__ import annotations

import math
from typing import Any

from pal.model import METRICS
from pal.parse.identity import unit_of

#: a test's columns, in the order of the ``base`` tuple every row of the test starts with
TEST_COLUMNS = ("test_id", "test_name", "suite", "nic", "frame_size", "cores", "threads_cores", "driver",
                "topology", "tags", "status")
#: a row's own columns, after the test's
ROW_COLUMNS = ("test_type", "metric", "unit", "value", "stdev", "trials", "message")
_TAGS = TEST_COLUMNS.index("tags")


class Rows:
    """The rows of one build: ``base`` (the test's columns, ``TEST_COLUMNS``) plus one metric's."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, base: tuple, test_type: str, metric: str, value: float, *, stdev: float = math.nan,
            trials: list[float] | None = None, message: str = "", unit: str | None = None) -> None:
        """One row; the unit is the message's, else the metric's for the test's transaction type
        (``identity.unit_of``)."""
        if unit is None:
            unit = unit_of(metric, METRICS[metric][0], base[_TAGS])
        self.rows.append(base + (test_type, metric, unit, value, stdev,
                                 list(trials) if trials is not None else None, message))

    @property
    def cols(self) -> dict[str, list[Any]]:
        """The rows as columns (name -> one value per row)."""
        names = TEST_COLUMNS + ROW_COLUMNS
        if not self.rows:
            return {c: [] for c in names}
        return dict(zip(names, map(list, zip(*self.rows))))
