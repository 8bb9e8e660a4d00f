"""`column` starting with a prefix, as a condition the column's ordinary index answers on
SQLite and PostgreSQL alike: a LIKE prefix does not (SQLite's LIKE ignores case, so its
BINARY index cannot serve it; PostgreSQL's needs a pattern index or the C collation), and
read every row of the table — a decision's Slack update read all of `slack_outgoing` (#40).

The condition is a range [low, high) that holds every string starting with the prefix
under the databases' collations, the bytewise ones and the linguistic ones (which ignore
punctuation and case at their first level), with the LIKE beside it to keep only those: the
index narrows the rows to the range, the LIKE decides."""

from __future__ import annotations

import itertools
import string

from sqlalchemy import ColumnElement, and_
from sqlalchemy.orm import InstrumentedAttribute

_ALNUM = string.digits + string.ascii_lowercase
_LETTERS = string.ascii_uppercase
# each letter or digit to the next above it ('9' → 'a'); 'z' and 'Z' have none
_NEXT = {**dict(itertools.pairwise(_ALNUM)), **dict(itertools.pairwise(_LETTERS))}


def prefix_bounds(prefix: str) -> tuple[str, str] | None:
    """(low, high): low the prefix without its trailing characters other than letters and
    digits, high that with its last letter or digit raised by one ('9' → 'a'; a 'z' is
    dropped and the letter or digit before it raised). None when there is none to raise."""
    low = prefix
    while low and low[-1] not in _NEXT and low[-1] not in "zZ":
        low = low[:-1]
    head = low
    while head and head[-1] not in _NEXT:
        head = head[:-1]
    if not head:
        return None
    return low, head[:-1] + _NEXT[head[-1]]


def prefix_range(column: InstrumentedAttribute[str | None], prefix: str
                 ) -> ColumnElement[bool]:
    """`column` in the range that holds every string starting with `prefix` (and, under a
    linguistic collation, maybe others: the caller checks), answered from the column's index;
    the LIKE itself when the prefix has no bounds."""
    bounds = prefix_bounds(prefix)
    if bounds is None:
        return column.startswith(prefix, autoescape=True)
    low, high = bounds
    return and_(column >= low, column < high)


def starts_with(column: InstrumentedAttribute[str | None], prefix: str
                ) -> ColumnElement[bool]:
    """`column` starts with `prefix` (case and all), answered from the column's index."""
    return and_(prefix_range(column, prefix), column.startswith(prefix, autoescape=True))
