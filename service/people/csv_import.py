"""Reading a CSV file of people for `timebot service import`: pure.

Columns (a header row names them, in any order, case-blind): name, e-mail (or email), role,
manager (the manager's e-mail), tags (separated by `;` or `|`). Row numbers are the file's as
a spreadsheet shows them: the header is row 1. A row that cannot be read is refused with its
row number, the column and why; the others are returned. What needs the organisation (roles,
managers, cycles, tags) is checked by `service.people.import_plan.plan`.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass, field, replace

from service.errors import ServiceError

#: a header cell (folded: lower case, without spaces, '-' or '_') -> the column
HEADERS = {
    "name": "name", "fullname": "name",
    "email": "email", "emailaddress": "email",
    "role": "role",
    "manager": "manager", "manageremail": "manager",
    "tags": "tags", "tag": "tags",
}
REQUIRED = ("name", "email")
#: how the columns are named in messages
LABELS = {"name": "name", "email": "e-mail", "role": "role", "manager": "manager",
          "tags": "tags"}
MAX_NAME = 255
MAX_EMAIL = 320
MAX_ROWS = 100_000
_EMAIL = re.compile(r"[^@\s]+@[^@\s.]+(\.[^@\s.]+)+")
_TAG_SEPARATORS = re.compile(r"[;|]")
#: control characters, invisible format characters (bidi overrides …), line separators
_CONTROL = frozenset({"Cc", "Cf", "Zl", "Zp"})


class ImportFileError(ServiceError):
    """The file as a whole cannot be read (no header, missing column, not text)."""


@dataclass(frozen=True)
class Row:
    line: int
    name: str
    email: str  # lower case
    role: str  # as written ("" = the employee role)
    manager: str | None  # the manager's e-mail, lower case
    tags: tuple[str, ...]  # as written, each once (case-blind), in the file's order


@dataclass(frozen=True)
class Refusal:
    line: int
    column: str  # a LABELS value, or "row"
    reason: str
    email: str | None = field(default=None, compare=False)  # the row's, when it has one

    def __str__(self) -> str:
        return f"row {self.line}: {self.column}: {self.reason}"


def has_control(text: str) -> bool:
    return any(unicodedata.category(ch) in _CONTROL for ch in text)


def tag_key(name: str) -> str:
    """Tags are told apart case-blind and with runs of spaces as one."""
    return " ".join(name.split()).casefold()


def _header(cells: list[str]) -> dict[str, int]:
    columns: dict[str, int] = {}
    for index, cell in enumerate(cells):
        key = re.sub(r"[\s_\-]", "", cell.strip().lstrip("\ufeff")).casefold()
        column = HEADERS.get(key)
        if column is None:
            if key:
                raise ImportFileError(
                    f"row 1: unknown column {cell.strip()!r} (the columns are: name, e-mail, "
                    "role, manager, tags)"
                )
            continue
        if column in columns:
            raise ImportFileError(f"row 1: the column {LABELS[column]} appears twice")
        columns[column] = index
    missing = [LABELS[c] for c in REQUIRED if c not in columns]
    if missing:
        raise ImportFileError(f"row 1: no {' and no '.join(missing)} column in the header")
    return columns


def _email(value: str) -> str | None:
    """The address in lower case, or None when it is not one."""
    address = value.strip().lower()
    if len(address) > MAX_EMAIL or has_control(address) or not _EMAIL.fullmatch(address):
        return None
    return address


def _row(line: int, cells: list[str], columns: dict[str, int]) -> Row | Refusal:
    def cell(column: str) -> str:
        index = columns.get(column)
        return cells[index] if index is not None and index < len(cells) else ""

    width = max(columns.values()) + 1
    if any(c.strip() for c in cells[width:]):
        return Refusal(line, "row", f"{len(cells)} cells, the header has {width}")
    if has_control(cell("name")):
        return Refusal(line, "name", "contains control characters")
    name = " ".join(cell("name").split())
    if not name:
        return Refusal(line, "name", "empty")
    if len(name) > MAX_NAME:
        return Refusal(line, "name", f"longer than {MAX_NAME} characters")
    email = _email(cell("email"))
    if email is None:
        written = cell("email").strip()
        return Refusal(line, "e-mail", f"{written!r} is not an e-mail address" if written
                       else "empty")
    role = cell("role").strip()
    if has_control(role):
        return Refusal(line, "role", "contains control characters")
    manager_cell = cell("manager").strip()
    manager = None
    if manager_cell:
        manager = _email(manager_cell)
        if manager is None:
            return Refusal(line, "manager", f"{manager_cell!r} is not an e-mail address")
    tags: dict[str, str] = {}
    for written in _TAG_SEPARATORS.split(cell("tags")):
        if has_control(written):
            return Refusal(line, "tags", "contains control characters")
        tag = " ".join(written.split())
        if len(tag) > MAX_NAME:
            return Refusal(line, "tags", f"a tag is longer than {MAX_NAME} characters")
        if tag:
            tags.setdefault(tag_key(tag), tag)
    return Row(line, name, email, role, manager, tuple(tags.values()))


def parse(text: str) -> tuple[list[Row], list[Refusal]]:
    """The rows of the file that can be read, and a refusal for each other one. A second row
    with an e-mail address already used above is refused (the first one stays)."""
    if "\x00" in text:
        raise ImportFileError("the file is not text (it contains NUL bytes)")
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[Row] = []
    refusals: list[Refusal] = []
    columns: dict[str, int] | None = None
    seen: dict[str, int] = {}
    line = 0
    try:
        for cells in reader:
            line += 1
            if columns is None:
                if not any(c.strip() for c in cells):
                    continue
                columns = _header(cells)
                line = 1
                continue
            if not any(c.strip() for c in cells):
                continue
            if len(rows) + len(refusals) >= MAX_ROWS:
                raise ImportFileError(f"more than {MAX_ROWS} rows; split the file")
            read = _row(line, cells, columns)
            if isinstance(read, Refusal):
                index = columns["email"]
                email = _email(cells[index]) if index < len(cells) else None
                refusals.append(replace(read, email=None if email in seen else email))
            elif read.email in seen:
                refusals.append(Refusal(line, "e-mail", f"duplicate e-mail {read.email}: "
                                        f"already on row {seen[read.email]}"))
            else:
                seen[read.email] = line
                rows.append(read)
    except csv.Error as error:
        raise ImportFileError(f"row {line + 1}: {error}") from error
    if columns is None:
        raise ImportFileError("the file is empty: a header row (name, e-mail, role, manager, "
                              "tags) is expected")
    return rows, refusals
