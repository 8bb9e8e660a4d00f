"""graphql-core's executor with the short-cut for plain fields: which fields take it, and
why, is service/graphql/fastpath.py's docstring.

The short-cut relies on graphql-core 3.3's executor internals; `fast_executor_class()`
returns None for another version and execution then simply uses graphql-core's own class.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import graphql
from graphql import (
    GraphQLObjectType,
    GraphQLOutputType,
    is_leaf_type,
    is_list_type,
    is_non_null_type,
    is_object_type,
)
from graphql.pyutils import Path, Undefined

from service.graphql.fast_plan import (
    _FALLBACK,
    _MAPPING_TYPES,
    _MISSING,
    _SIMPLE,
    _Plan,
    settle_fields,
)
from service.graphql.fastpath import is_plain
from service.graphql.plan_store import SharedPlans, shared_plans

# A list longer than this is completed in parts, the event loop getting a turn between them.
TURN_ITEMS = 200


def _make_fast_executor_class() -> type[Any] | None:
    if graphql.version_info.major != 3 or graphql.version_info.minor != 3:
        return None
    try:
        from graphql.execution.executor import default_field_resolver
        from graphql.execution.incremental.incremental_executor import IncrementalExecutor
        from graphql.pyutils import gather_with_cancel
    except ImportError:  # pragma: no cover - another layout of graphql-core
        return None

    class FastExecutor(IncrementalExecutor):  # type: ignore[misc]
        """graphql-core's executor with the short-cut for plain fields (fastpath.py)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # The operation's plans from its earlier requests, or this one's (plan_store.py).
            shared = self._shared = shared_plans(self.schema, self.operation, self.fragments)
            kept = shared or SharedPlans()
            self._plans, self._objects, self._lists = kept.plans, kept.objects, kept.lists
            self._planned = kept.planned  # keeps the keyed lists alive (ids stay unique)
            if shared is not None:
                self._relevant_sub_fields = shared.sub_fields
            self._streams = self.schema.get_directive("stream") is not None

        def execute_collected_root_fields(self, root_type: GraphQLObjectType, root_value: Any,
                                          grouped_field_set: Any, *args: Any) -> Any:
            """The root fields as the operation's first request collected them (their plans)."""
            if self._shared is not None:
                grouped_field_set = self._shared.roots.setdefault(id(root_type), grouped_field_set)
            return super().execute_collected_root_fields(
                root_type, root_value, grouped_field_set, *args)

        # ------------------------------------------------------------------ planning

        def _plan(self, parent_type: GraphQLObjectType, field_details_list: Any
                  ) -> _Plan | None:
            if self.middleware_manager is not None or self._streams:
                return None
            node = field_details_list[0].node
            name = node.name.value
            field_def = self.schema.get_field(parent_type, name)
            if field_def is None or field_def.args or node.arguments:
                return None
            resolver = field_def.resolve
            if resolver is None:
                if self.field_resolver is not default_field_resolver:
                    return None
            elif not is_plain(resolver):
                return None
            return self._shape_plan(
                parent_type.name, name, resolver, field_def.type, field_details_list)

        def _shape_plan(self, type_name: str, name: str, resolver: Callable[..., Any] | None,
                        return_type: GraphQLOutputType, field_details_list: Any
                        ) -> _Plan | None:
            """The plan for completing values of `return_type`, when it has a shape the
            short-cut knows (a leaf or a plain object type, maybe in a list, maybe non-null)."""
            non_null = is_non_null_type(return_type)
            named: Any = return_type.of_type if non_null else return_type  # type: ignore[union-attr]
            is_list = is_list_type(named)
            item_type: Any = named.of_type if is_list else named
            item_non_null = is_list and is_non_null_type(item_type)
            inner: Any = item_type.of_type if item_non_null else item_type
            leaf = inner if is_leaf_type(inner) else None
            object_type = subfields = None
            if leaf is None:
                if not is_object_type(inner) or inner.is_type_of is not None:
                    return None
                collected = self.collect_subfields(inner, field_details_list)
                if collected.new_defer_usages:
                    return None
                object_type, subfields = inner, collected.grouped_field_set
            return _Plan(
                name=name,
                resolver=resolver,
                return_type=return_type,
                non_null=non_null,
                is_list=is_list,
                item_type=item_type,
                item_non_null=item_non_null,
                leaf=leaf,
                object_type=object_type,
                subfields=subfields,
                null_message=f"Cannot return null for non-nullable field {type_name}.{name}.",
            )

        def _field_plan(self, parent_type: GraphQLObjectType, field_details_list: Any
                        ) -> _Plan | None:
            key = (id(parent_type), id(field_details_list))
            plan = self._plans.get(key, _MISSING)
            if plan is _MISSING:
                plan = self._plan(parent_type, field_details_list)
                self._plans[key] = plan
                self._planned.append(field_details_list)
            return plan  # type: ignore[no-any-return]

        def _object_plan(self, parent_type: GraphQLObjectType, grouped_field_set: Any
                         ) -> list[tuple[str, Any, _Plan | None]]:
            key = (id(parent_type), id(grouped_field_set))
            entries = self._objects.get(key)
            if entries is None:
                entries = [
                    (response_name, details, self._field_plan(parent_type, details))
                    for response_name, details in grouped_field_set.items()
                ]
                self._objects[key] = entries
                self._planned.append(grouped_field_set)
            return entries

        # ------------------------------------------------------------------ executing

        def execute_fields(
            self,
            parent_type: GraphQLObjectType,
            source_value: Any,
            path: Any,
            grouped_field_set: Any,
            position_context: Any,
        ) -> Any:
            """graphql-core's execute_fields, with plain leaves and objects completed in line
            (no resolve info, and for leaves no path, unless something needs them)."""
            if position_context is not None:
                return super().execute_fields(
                    parent_type, source_value, path, grouped_field_set, position_context)
            results: dict[str, Any] = {}
            is_awaitable = self.is_awaitable
            awaitable_fields: list[str] = []
            type_name = parent_type.name
            try:
                for response_name, details, plan in self._object_plan(
                        parent_type, grouped_field_set):
                    if plan is not None and not plan.is_list:
                        value = self._value(plan, source_value)
                        if value is None or value is Undefined:
                            if not plan.non_null:
                                results[response_name] = None
                                continue
                        elif value is _FALLBACK:
                            pass
                        elif plan.leaf is not None:
                            try:
                                coerced = plan.leaf.coerce_output_value(value)
                            except Exception:
                                coerced = None  # the ordinary path reports it
                            if coerced is not None and coerced is not Undefined:
                                results[response_name] = coerced
                                continue
                        else:  # an object: its fields, as graphql-core completes them
                            field_path = Path(path, response_name, type_name)
                            try:
                                result = self.execute_fields(
                                    plan.object_type, value, field_path, plan.subfields, None)
                            except Exception as raw_error:
                                self.handle_field_error(
                                    raw_error, plan.return_type, details, field_path)
                                result = None
                            if is_awaitable(result):
                                result = self._await_field(
                                    result, plan.return_type, details, field_path)
                                awaitable_fields.append(response_name)
                            results[response_name] = result
                            continue
                    result = self.execute_field(
                        parent_type, source_value, details,
                        Path(path, response_name, type_name), None)
                    if result is not Undefined:
                        results[response_name] = result
                        if is_awaitable(result):
                            awaitable_fields.append(response_name)
            except Exception:
                if awaitable_fields:
                    self.settle_in_background(
                        [results[field] for field in awaitable_fields])
                raise
            if not awaitable_fields:
                return results

            return settle_fields(results, awaitable_fields)

        def execute_field(
            self,
            parent_type: GraphQLObjectType,
            source: Any,
            field_details_list: Any,
            path: Any,
            position_context: Any,
        ) -> Any:
            plan = None
            if position_context is None:
                plan = self._field_plan(parent_type, field_details_list)
            if plan is None:
                return super().execute_field(
                    parent_type, source, field_details_list, path, position_context)
            value = self._value(plan, source)
            if value is _FALLBACK:
                return super().execute_field(
                    parent_type, source, field_details_list, path, position_context)
            try:
                completed = self._complete(plan, field_details_list, path, value)
            except Exception as raw_error:
                self.handle_field_error(raw_error, plan.return_type, field_details_list, path)
                return None
            if self.is_awaitable(completed):
                return self._await_field(completed, plan.return_type, field_details_list, path)
            return completed

        def complete_list_value(
            self,
            return_type: Any,
            field_details_list: Any,
            info: Any,
            path: Any,
            result: Any,
            position_context: Any,
        ) -> Any:
            """Lists from resolvers of their own (getTimeRecords…): their items as above."""
            if position_context is None and not self._streams and isinstance(
                    result, (list, tuple)):
                key = (id(return_type), id(field_details_list))
                plan = self._lists.get(key, _MISSING)
                if plan is _MISSING:
                    plan = self._shape_plan(
                        info.parent_type.name, info.field_name, None, return_type,
                        field_details_list)
                    self._lists[key] = plan
                    self._planned.append(field_details_list)
                if plan is not None and not any(
                        isinstance(item, Exception) or self.is_awaitable(item)
                        for item in result):
                    return self._complete_list(plan, field_details_list, path, result)
            return super().complete_list_value(
                return_type, field_details_list, info, path, result, position_context)

        def _value(self, plan: _Plan, source: Any) -> Any:
            """The field's value, or _FALLBACK when the ordinary path must decide."""
            if plan.resolver is None:
                source_type = type(source)
                mapping = _MAPPING_TYPES.get(source_type)
                if mapping is None:
                    mapping = _MAPPING_TYPES[source_type] = isinstance(source, Mapping)
                value = source.get(plan.name) if mapping else getattr(source, plan.name, None)
                if type(value) in _SIMPLE and not plan.is_list:
                    return value
                if callable(value):
                    return _FALLBACK
            else:
                try:
                    value = plan.resolver(source, None)
                except Exception:
                    return _FALLBACK  # the ordinary path raises it again, with its path
                if type(value) in _SIMPLE and not plan.is_list:
                    return value
            if isinstance(value, Exception) or self.is_awaitable(value):
                return _FALLBACK
            if plan.is_list and value is not None and value is not Undefined:
                if not isinstance(value, (list, tuple)):
                    return _FALLBACK  # including strings: not a list to graphql-core
                is_awaitable = self.is_awaitable
                for item in value:
                    if isinstance(item, Exception) or is_awaitable(item):
                        return _FALLBACK
            return value

        def _complete(self, plan: _Plan, field_details_list: Any, path: Any, value: Any
                      ) -> Any:
            if value is None or value is Undefined:
                if plan.non_null:
                    raise TypeError(plan.null_message)
                return None
            if plan.is_list:
                return self._complete_list(plan, field_details_list, path, value)
            return self._complete_item(plan, field_details_list, path, value)

        def _complete_item(self, plan: _Plan, field_details_list: Any, path: Any, value: Any
                           ) -> Any:
            if plan.leaf is not None:
                return self.complete_leaf_value(plan.leaf, value)
            return self.execute_fields(plan.object_type, value, path, plan.subfields, None)

        def _complete_list(self, plan: _Plan, field_details_list: Any, path: Any,
                           items: list[Any] | tuple[Any, ...]) -> Any:
            if len(items) > TURN_ITEMS:
                return self._complete_in_turns(plan, field_details_list, path, items)
            return self._complete_items(plan, field_details_list, path, items, 0)

        async def _complete_in_turns(self, plan: _Plan, field_details_list: Any, path: Any,
                                     items: list[Any] | tuple[Any, ...]) -> list[Any]:
            """A long list TURN_ITEMS items at a time, the event loop given a turn between
            them (in one go, a list of plain items holds every other request meanwhile)."""
            completed: list[Any] = []
            for start in range(0, len(items), TURN_ITEMS):
                if start:
                    await asyncio.sleep(0)
                part = self._complete_items(plan, field_details_list, path,
                                            items[start:start + TURN_ITEMS], start)
                completed.extend(await part if self.is_awaitable(part) else part)
            return completed

        def _complete_items(self, plan: _Plan, field_details_list: Any, path: Any,
                            items: list[Any] | tuple[Any, ...], offset: int) -> Any:
            is_awaitable = self.is_awaitable
            completed_results: list[Any] = []
            awaitable_indices: list[int] = []
            try:
                for index, item in enumerate(items):
                    item_path = path.add_key(offset + index, None)
                    try:
                        if item is None or item is Undefined:
                            if plan.item_non_null:
                                raise TypeError(plan.null_message)
                            completed = None
                        else:
                            completed = self._complete_item(
                                plan, field_details_list, item_path, item)
                        if is_awaitable(completed):
                            completed = self._await_field(
                                completed, plan.item_type, field_details_list, item_path)
                            awaitable_indices.append(index)
                    except Exception as raw_error:
                        self.handle_field_error(
                            raw_error, plan.item_type, field_details_list, item_path)
                        completed = None
                    completed_results.append(completed)
            except Exception:
                if awaitable_indices:
                    self.settle_in_background(
                        [completed_results[index] for index in awaitable_indices])
                raise
            if not awaitable_indices:
                return completed_results

            async def gather_items() -> list[Any]:
                if len(awaitable_indices) == 1:
                    index = awaitable_indices[0]
                    completed_results[index] = await completed_results[index]
                else:
                    awaited = await gather_with_cancel(
                        *(completed_results[index] for index in awaitable_indices))
                    for index, result in zip(awaitable_indices, awaited, strict=True):
                        completed_results[index] = result
                return completed_results

            return gather_items()

        async def _await_field(self, completed: Any, return_type: GraphQLOutputType,
                               field_details_list: Any, path: Any) -> Any:
            try:
                return await completed
            except Exception as raw_error:
                self.handle_field_error(raw_error, return_type, field_details_list, path)
                return None

    return FastExecutor


_FAST_EXECUTOR = _make_fast_executor_class()


def fast_executor_class() -> type[Any] | None:
    """The executor class to pass to graphql-core's `execute`, or None for its own."""
    return _FAST_EXECUTOR
