"""Refused fields are omitted, never propagated.

The specification: "The request does not fail as a whole: affected fields are omitted from
`data` and their paths listed in `permissionsErrors`." graphql-core, like every GraphQL
executor, turns an error in a non-null field into a null of its nearest nullable ancestor,
so one refused `getTimeRecord` (type `SvcTimeRecord!`) used to make the whole `data` null and
lose its siblings (`currentPerson`, the results of the other mutations of the request).

`omitting_refusals(executor_class)` derives an executor that completes a field refused with
`PermissionDenied` leniently, whatever its nullability and depth: the refusal is recorded
as the field's error and the field's value is left null in place (its parent stays), and
`execution.shape_result` then drops exactly that key from `data` (a refused list item
stays null: dropping it would renumber its siblings' paths). Every other error keeps the
standard propagation. Both executors (graphql-core's own and the quicker `fastpath` one)
report field errors through `handle_field_error`, so overriding it covers every path and
depth.
"""

from __future__ import annotations

from typing import Any

from graphql import GraphQLError, located_error

from service.errors import PermissionDenied


def refusal(error: BaseException) -> PermissionDenied | None:
    """The PermissionDenied behind an error (raised directly or already located)."""
    if isinstance(error, PermissionDenied):
        return error
    if isinstance(error, GraphQLError) and isinstance(error.original_error, PermissionDenied):
        return error.original_error
    return None


def _library_executor_class() -> type[Any]:
    """graphql-core's own executor class: `ExecutionContext` up to 3.2, `Executor` after."""
    import graphql.execution

    found = getattr(graphql.execution, "ExecutionContext", None) or graphql.execution.Executor
    assert isinstance(found, type)
    return found


def omitting_refusals(base: type[Any] | None) -> type[Any]:
    """`base` (a graphql-core executor class; None: the library's own) with refused fields
    completed as omitted."""
    if base is None:
        base = _library_executor_class()

    class OmittingRefusals(base):  # type: ignore[misc, valid-type]
        """Refused fields stay where they are, as nulls to omit (module docstring)."""

        def handle_field_error(
            self, raw_error: Exception, return_type: Any, field_details_list: Any,
            path: Any, *args: Any,
        ) -> None:
            if refusal(raw_error) is None:
                super().handle_field_error(
                    raw_error, return_type, field_details_list, path, *args)
                return
            # graphql-core 3.3 passes field details and collects errors by position; 3.2
            # passes the field nodes themselves and keeps a plain list.
            nodes = [getattr(details, "node", details) for details in field_details_list]
            error = located_error(raw_error, nodes, path.as_list())
            collected = getattr(self, "collected_errors", None)
            if collected is not None:
                collected.add(error, path)
            else:
                self.errors.append(error)

    OmittingRefusals.__name__ = f"OmittingRefusals{base.__name__}"
    return OmittingRefusals
