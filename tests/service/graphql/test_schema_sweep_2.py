"""The GraphQL schema sweep's group 2 (tests/service/graphql/sweep_by_group.py)."""

import pytest

from tests.service.graphql.sweep_by_group import (  # noqa: F401  (the tests and their fixture)
    group,
    test_a_stranger_is_refused_everything_and_nothing_crashes,
    test_every_operation_answers_hostile_arguments_without_crashing,
)

# A minute or more of requests: started first (tests/slow_first.py), not left for the end.
pytestmark = pytest.mark.slow
GROUP = 2
