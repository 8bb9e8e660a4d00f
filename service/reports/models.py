"""Saved reports (SvcReport) in folders (SvcReportFolder), and the results a run keeps for
getReportResult. A report's parameters are kept as the GraphQL input they came as (checked by
service/reports/inline_report.py before being stored); its recurrence is a few columns that the
due-report sender of timebot reads over GraphQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, OrgScoped, id_column


class ReportFolder(OrgScoped, Base):
    __tablename__ = "report_folders"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    owner_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE"), index=True
    )
    # SvcReportFilter objects every report of the folder also matches (a filter chain)
    filters: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    # SvcReportParamPeriodInput: the period of its reports that name none
    period: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # time | absence: the only records its reports cover
    record_scope: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # the ids of the persons it is shared with, in sharing order
    shared_with: Mapped[list[str]] = mapped_column(JSON, default=list)
    created_ms: Mapped[int] = mapped_column(BigInteger)


class Report(OrgScoped, Base):
    __tablename__ = "reports"

    id: Mapped[str] = id_column()
    folder_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("report_folders.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(255))
    # records, period, filters, attributes, groupBy, options, columnOrder, subtotalColumns,
    # hideEmptyColumns: as given
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    chart: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    notify_emails: Mapped[list[str]] = mapped_column(JSON, default=list)
    recurrence_enabled: Mapped[bool] = mapped_column(Boolean, default=False)
    recurrence_period: Mapped[str] = mapped_column(String(16), default="week")
    recurrence_target: Mapped[str] = mapped_column(String(16), default="previous")
    send_mode: Mapped[str] = mapped_column(String(16), default="afterEnd")
    send_offset: Mapped[int] = mapped_column(Integer, default=0)
    hour_of_day: Mapped[int] = mapped_column(Integer, default=8)
    last_run_ms: Mapped[int] = mapped_column(BigInteger, default=0)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    edited_ms: Mapped[int] = mapped_column(BigInteger)


class ReportResult(OrgScoped, Base):
    """One run's rows, kept until `expire_ms` for the person who ran it."""

    __tablename__ = "report_results"

    id: Mapped[str] = id_column()
    report_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("reports.id", ondelete="CASCADE"), nullable=True, index=True
    )
    person_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE"), index=True
    )
    # [{person: id|None, projects: [ids], quantities: {...}}]
    rows: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    error: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    start_ms: Mapped[int] = mapped_column(BigInteger)
    end_ms: Mapped[int] = mapped_column(BigInteger)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    expire_ms: Mapped[int] = mapped_column(BigInteger)


class ReportLink(OrgScoped, Base):
    """A link to a report's figures that works without signing in: the token is random and
    only its digest is kept; it runs the report as the person it was made for, over the
    period of the run it was made from, until it expires (or the report is deleted)."""

    __tablename__ = "report_links"

    id: Mapped[str] = id_column()
    report_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("reports.id", ondelete="CASCADE"), index=True
    )
    person_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE"), index=True
    )
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    start_ms: Mapped[int] = mapped_column(BigInteger)
    end_ms: Mapped[int] = mapped_column(BigInteger)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    expire_ms: Mapped[int] = mapped_column(BigInteger)
