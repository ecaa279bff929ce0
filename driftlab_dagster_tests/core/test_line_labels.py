"""What a line opening with a label is about, as handbooks write lists, definition lines and table rows."""

from __future__ import annotations

import pytest

from driftlab_dagster.core.line_labels import line_label


@pytest.mark.parametrize(("line", "label"), [
    ("Tolls: receipts for all tolls over $25 are required.", "Tolls"),
    ("Level 5 summary ratings: Up to 2.5% of adjusted basic pay", "Level 5 summary ratings"),
    ("Expense: Parking; Monthly limit: $130 for a garage pass.", "Parking"),  # a table row
    ("GSA: the agency.", "GSA"),
    ("Note: bring a receipt.", None),
    ("For example: a $25 toll.", None),
    ("ACTION: file the form.", None),
    ("BILLABLE: 32 hours a week.", None),  # shouted: a marker
    ("Acting Director: Will Slack", None),
    ("Mondays: the design huddle.", None),
    ("Cost per day: $25", None),
    ("90 days: the first review.", None),
    ("Members of the Engineering team come from all over: ...", None),  # a clause, not a name
    ("No label in this line.", None),
])
def test_a_lines_label_is_what_it_is_about_unless_it_says_what_kind_of_line_it_is(line, label):
    assert line_label(line) == label
