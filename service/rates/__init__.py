"""Billing and cost rates: the tables (`models`), which rate applies (`rules`), amounts summed
exactly (`rate_amounts`), the database side (`store`) and their resolvers."""

from typing import TYPE_CHECKING

from service.face import face_attribute

if TYPE_CHECKING:
    from service.rates.rate_amounts import PricedEntry, Totals, summarise
    from service.rates.rules import Entry, project_chain, resolve
    from service.rates.store import (
        check_amount,
        day_of,
        load_book,
        may_view_rates,
        organisation_zone,
        require_manage_rates,
        require_view_rates,
    )

__all__ = [
    "Entry",
    "PricedEntry",
    "Totals",
    "check_amount",
    "day_of",
    "load_book",
    "may_view_rates",
    "organisation_zone",
    "project_chain",
    "require_manage_rates",
    "require_view_rates",
    "resolve",
    "summarise",
]


def __getattr__(name: str) -> object:
    return face_attribute(__name__, name)
