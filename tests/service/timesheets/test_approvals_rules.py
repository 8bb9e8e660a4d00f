"""The pure rules of the approval workflow, without a server (the GraphQL tests drive the same
rules end to end)."""

from __future__ import annotations

from datetime import date
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as s

from plumbing import periods
from service.organisation.settings_cascade import Resolved
from service.timesheets import changes as ch
from service.timesheets import stages as st
from service.timesheets.autosubmit import auto_submit_due, due_periods
from service.timesheets.edit_rights import EditCheck, decide
from service.timesheets.period_rules import PeriodSettings
from service.timesheets.reminders import reminder_due

DAY = 86_400_000


@given(s.sampled_from(["any", "all", "ANY", "All"]) | s.integers(1, 50).map(str),
       s.integers(0, 60))
def test_quorum_is_between_one_and_every_approver(quorum: str, approvers: int) -> None:
    needed = st.required_approvals(st.normalise_quorum(quorum), approvers)
    assert needed == 0 if approvers == 0 else 1 <= needed <= approvers


@pytest.mark.parametrize("bad", ["", "0", "-1", "most", "1.5"])
def test_quorum_rejects_nonsense(bad: str) -> None:
    with pytest.raises(ValueError):
        st.normalise_quorum(bad)


def directory(**kwargs: object) -> st.Directory:
    base: dict[str, object] = {
        "owner_id": "o", "active_ids": {"o", "a1", "a2", "m", "p"}, "admin_ids": {"a1", "a2"},
        "people_manager_ids": {"m"},
    }
    base.update(kwargs)
    return st.Directory(**base)  # type: ignore[arg-type]


def test_owner_never_approves_and_sole_owner_stage_is_escalated() -> None:
    found = st.resolve_stages(
        [{"type": "pm", "quorum": "all"}, {"type": "ppm"}, {"type": "tm"}],
        {"x"}, set(),
        directory(project_manager_ids={"x": {"o"}}),
    )
    assert [(r.approvers, r.skipped, r.escalated) for r in found] == [
        (["a1", "a2"], False, True), (["m"], False, False), ([], True, False)
    ]
    assert found[0].required == 2


def test_archived_people_are_not_eligible() -> None:
    found = st.resolve_stages([{"type": "person", "personIds": ["gone"]}], set(), set(),
                              directory())
    assert found[0].skipped


def test_first_open_stage_skips_done_and_empty_stages() -> None:
    stages = [
        {"approvers": ["a"], "required": 1, "skipped": False},
        {"approvers": [], "required": 0, "skipped": True},
        {"approvers": ["b", "c"], "required": 2, "skipped": False},
    ]
    assert st.first_open_stage(stages, 0, {}) == 0
    assert st.first_open_stage(stages, 0, {0: {"a"}}) == 2
    assert st.first_open_stage(stages, 0, {0: {"a"}, 2: {"b", "x"}}) == 2
    assert st.first_open_stage(stages, 0, {0: {"a"}, 2: {"b", "c"}}) == 3
    assert st.last_active_stage(stages) == 2


@pytest.mark.parametrize(
    ("caller", "status", "approvers", "rejected_by", "allowed", "restarts"),
    [
        ("o", "d", (), None, True, False),
        ("o", "s", (), None, False, False),
        ("o", "a", (), None, False, False),
        ("o", "r", (), None, True, False),
        ("x", "d", (), None, False, False),
        ("x", "s", ("x",), None, True, True),
        ("x", "s", ("y",), None, False, False),
        ("x", "a", ("x",), None, False, False),
        ("x", "r", (), "x", True, False),
        ("x", "r", (), "y", False, False),
    ],
)
def test_edit_rights_table(caller: str, status: str, approvers: tuple[str, ...],
                           rejected_by: str | None, allowed: bool, restarts: bool) -> None:
    decision = decide(EditCheck(caller, False, "o", status, "P",
                                current_stage_approvers=frozenset(approvers),
                                rejected_by_id=rejected_by))
    assert (decision.allowed, decision.restarts_workflow) == (allowed, restarts)
    assert decision.allowed or decision.reason
    admin = decide(EditCheck(caller, True, "o", status, "P", admin_only_for_others=True))
    assert admin.allowed and not admin.restarts_workflow


def test_settings_narrow_who_may_edit() -> None:
    approver = EditCheck("x", False, "o", "s", "P", current_stage_approvers=frozenset({"x"}),
                         owner_or_admin_only=True)
    assert "Only the owner or an admin" in decide(approver).reason
    others = EditCheck("x", False, "o", "r", "P", rejected_by_id="x",
                       admin_only_for_others=True)
    assert "only an administrator can edit someone else's" in decide(others).reason
    assert decide(EditCheck("o", False, "o", "d", "P", admin_only_for_others=True)).allowed


def test_changes_and_carried_approvals() -> None:
    before = {"r1": {"fp": "1", "projects": ["A"], "task": None},
              "r2": {"fp": "2", "projects": ["B"], "task": "T"},
              "r3": {"fp": "3", "projects": ["C"], "task": None}}
    after = {"r1": {"fp": "1b", "projects": ["D"], "task": None},
             "r2": {"fp": "2", "projects": ["B"], "task": "T"},
             "r4": {"fp": "4", "projects": [], "task": None}}
    changes = ch.diff(before, after)
    assert changes.as_json() == {"added": ["r4"], "modified": ["r1"], "deleted": ["r3"]}
    projects, tasks = ch.touched(before, after, changes)
    assert projects == {"A", "C", "D"} and tasks == set()
    pms, tms = ch.affected_managers(projects, tasks, {"A": {"pa"}, "B": {"pb"}, "D": {"pd"}},
                                    {"T": {"tt"}})
    assert pms == {"pa", "pd"} and tms == set()
    kept = ch.carried_over("pm", ["pa", "pb", "new"], {"pm": {"pa", "pb"}}, pms, tms)
    assert kept == {"pb"}
    assert ch.carried_over("ppm", ["m"], {"ppm": {"m"}}, set(), set()) == set()


def test_reminder_and_auto_submit_timing() -> None:
    assert not reminder_due(None, 0, None, 10 * DAY)
    assert not reminder_due(0, 0, None, 10 * DAY)
    assert reminder_due(2, 0, None, 2 * DAY) and not reminder_due(2, 0, None, 2 * DAY - 1)
    assert not reminder_due(2, 0, 2 * DAY, 3 * DAY)
    start, end = periods.period_at("weekly", 1_772_409_600_000 + 3 * DAY, ZoneInfo("UTC"))
    assert (start, end - start) == (1_772_409_600_000, 7 * DAY)
    assert auto_submit_due(0, end, end) and not auto_submit_due(1, end, end + DAY - 1)
    assert not auto_submit_due(None, end, end + 100 * DAY)
    # In the person's zone: N local days after the local end.
    tokyo = ZoneInfo("Asia/Tokyo")
    local_end = end - 9 * 3_600_000
    assert auto_submit_due(1, local_end, local_end + DAY, tokyo)
    assert not auto_submit_due(1, local_end, local_end + DAY - 1, tokyo)


def test_auto_submit_due_periods() -> None:
    zone = ZoneInfo("Europe/Berlin")
    settings = PeriodSettings(Resolved("semiMonthly"), Resolved(None), zone, 1)
    nov_3 = periods.local_midnight_ms(date(2026, 11, 3), zone)
    nov_20 = periods.local_midnight_ms(date(2026, 11, 20), zone)
    nov_16 = periods.local_midnight_ms(date(2026, 11, 16), zone)
    dec_1 = periods.local_midnight_ms(date(2026, 12, 1), zone)
    first = (periods.local_midnight_ms(date(2026, 11, 1), zone), nov_16)
    assert due_periods([nov_3, nov_3 + 1, nov_20], settings, 0, nov_16) == [first]
    assert due_periods([nov_3, nov_20], settings, 0, dec_1) == [(nov_16, dec_1)]
    # Long past its due day (more than the catch-up days): left alone.
    assert due_periods([nov_3], settings, 0, nov_16 + 20 * DAY) == []
