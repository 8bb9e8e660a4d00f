"""The GraphQL schema sweep's group 0 (tests/service/graphql/sweep_by_group.py)."""

import pytest

from tests.service.graphql.sweep_by_group import (  # noqa: F401  (the tests and their fixture)
    GROUPS,
    group,
    group_files,
    test_a_stranger_is_refused_everything_and_nothing_crashes,
    test_every_operation_answers_hostile_arguments_without_crashing,
)

# A minute or more of requests: started first (tests/slow_first.py), not left for the end.
pytestmark = pytest.mark.slow
GROUP = 0


def test_every_group_has_its_file() -> None:
    assert group_files() == [f"test_schema_sweep_{number}.py" for number in range(GROUPS)]
