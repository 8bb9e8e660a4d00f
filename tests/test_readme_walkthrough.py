"""README's "Trying the whole loop locally", followed literally: `make run`'s command (as the
Makefile writes it) on a fresh data dir, then each step with the commands of README's fenced
blocks (swaks to timebot's SMTP port; the /outbox page's "Answer as …" form), checking after
each step what README says appears in the outbox. README and this test cannot drift: change
a step's command in README and this test runs the new one.

Only the addresses change: README's 127.0.0.1:2525 and :8000 become this test's free ports,
and `approvals+…@timebot.localhost` the Reply-To copied from the review e-mail's page, as
README tells the reader to do."""

from __future__ import annotations

import asyncio
import html
import re
import shlex
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import httpx
import pytest

from tests.net import free_port
from tests.pg import create_pg_database, drop_pg_database, pg_url
from tests.timebot.serve_process import Served, serve_env, serving

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Trying the whole loop locally"
PLACEHOLDER = "approvals+…@timebot.localhost"
T = TypeVar("T")
# The owner's notice ("Your timesheet for … is approved / was rejected") is
# mail.outbound.owner_notices, merged from another branch: checked whenever that module is in this
# checkout.
OWNER_NOTICES = (ROOT / "mail" / "outbound" / "owner_notices.py").is_file()


def walkthrough_blocks() -> list[tuple[str, str]]:
    """(language, text) of each fenced block of README's walkthrough, in order."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index(SECTION)
    section = readme[start:readme.index("\n## ", start + len(SECTION))]
    return [(language, textwrap_dedent(body)) for language, body in
            re.findall(r"^ *```(\w+)\n(.*?)^ *```", section, re.S | re.M)]


def textwrap_dedent(text: str) -> str:
    lines = text.splitlines()
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return "\n".join(line[indent:] for line in lines)


def commands(block: str) -> list[list[str]]:
    """The shell commands of a block (backslash continuations joined), split as sh would."""
    joined = block.replace("\\\n", " ")
    return [shlex.split(line) for line in joined.splitlines() if line.strip()]


def make_run_env() -> dict[str, str]:
    """The variables `make run`'s recipe sets (NAME=$${NAME-default}: the default)."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile[makefile.index("\nrun:") + 1:].split("\n")[1]
    assert recipe.rstrip().endswith("timebot serve --demo"), recipe
    return dict(re.findall(r"(\w+)=\$\$\{\w+-([^}]*)\}", recipe))


async def until(check: Callable[[], Awaitable[T | None]], what: str) -> T:
    # Up to two minutes: with the whole suite running beside it, a mail's round trip (SMTP,
    # the inbox worker, the service, the outbox) has taken over one.
    for _ in range(1200):
        found = await check()
        if found:
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"README said {what} would appear in the outbox")


class Outbox:
    """The /outbox pages, read as the reader reads them."""

    def __init__(self, http: httpx.AsyncClient, base: str) -> None:
        self.http = http
        self.base = base

    async def listing(self) -> list[tuple[str, str, str]]:
        page = await self.http.get(f"{self.base}/outbox")
        assert page.status_code == 200
        rows = re.findall(r"<tr><td>[^<]*</td><td>([^<]*)</td>\s*<td><a href=\"(/outbox/[^\"]+)"
                          r"\">([^<]*)</a>", page.text)
        return [(html.unescape(to), href, html.unescape(subject)) for to, href, subject in rows]

    async def find(self, to: str, subject: str) -> str | None:
        for address, href, title in await self.listing():
            if address == to and subject in title:
                return href
        return None

    async def wait(self, to: str, subject: str, what: str, count: int = 1) -> list[str]:
        async def found() -> list[str] | None:
            hrefs = [href for address, href, title in await self.listing()
                     if address == to and subject in title]
            return hrefs if len(hrefs) >= count else None

        return await until(found, what)

    async def page(self, href: str) -> str:
        answer = await self.http.get(f"{self.base}{href}")
        assert answer.status_code == 200
        return answer.text

    async def text(self, href: str) -> str:
        found = re.search(r'<pre id="body">(.*?)</pre>', await self.page(href), re.S)
        assert found is not None
        return html.unescape(found.group(1))

    async def newest_with(self, to: str, subject: str, containing: str) -> str:
        """The href of the newest message to `to` with `subject` whose text has `containing`."""
        async def found() -> str | None:
            for address, href, title in await self.listing():
                if address == to and subject in title and containing in await self.text(href):
                    return href
            return None

        return await until(found, f"{containing!r} to {to}")

    async def newest_text(self, to: str, subject: str, containing: str) -> str:
        return await self.text(await self.newest_with(to, subject, containing))


async def run_block(block: str, smtp_port: int, reply_to: str | None = None) -> None:
    for argv in commands(block):
        argv = [arg.replace("127.0.0.1:2525", f"127.0.0.1:{smtp_port}") for arg in argv]
        if reply_to is not None:
            argv = [arg.replace(PLACEHOLDER, reply_to) for arg in argv]
        assert argv[0] == "swaks", argv
        process = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        output, _ = await process.communicate()
        assert process.returncode == 0, output.decode(errors="replace")


def header_of(page: str, name: str) -> str:
    found = re.search(rf"<tr><th>{name}</th><td>([^<]*)</td></tr>", page)
    assert found is not None, name
    return html.unescape(found.group(1))


@pytest.fixture(params=["sqlite", "postgresql"])
async def databases(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, str]]:
    """README's default (SQLite in the data dir), or both databases on PostgreSQL."""
    if request.param == "sqlite":
        yield {}
        return
    service, bot = await create_pg_database(), await create_pg_database()
    try:
        yield {"TIMEBOT_SERVICE_DATABASE_URL": pg_url(service), "TIMEBOT_DATABASE_URL": pg_url(bot)}
    finally:
        await drop_pg_database(service)
        await drop_pg_database(bot)


async def test_readme_walkthrough(tmp_path: Path, databases: dict[str, str]) -> None:
    blocks = walkthrough_blocks()
    assert [language for language, _ in blocks] == ["sh", "sh", "sh", "sh", "text"], blocks
    log_time, submit, approve, dorothy, reject = (text for _, text in blocks)
    smtp_port = free_port()
    env = serve_env(tmp_path / "var", TIMEBOT_HTTP_PORT=str(free_port()),
                    TIMEBOT_SMTP_PORT=str(smtp_port), **make_run_env(), **databases)
    async with serving(env, "--demo", cwd=tmp_path) as served, \
            httpx.AsyncClient(timeout=30) as http:
        outbox = Outbox(http, served.base)
        margaret, grace = "margaret@northwind.example", "grace@northwind.example"
        dorothy_address, linus = "dorothy@northwind.example", "linus@northwind.example"

        # 1. Margaret logs time by mail: her receipt.
        await run_block(log_time, smtp_port)
        await outbox.newest_text(margaret, "Re: my hours", "Logged 1 entry")

        # 2. She submits: her receipt, Grace's review e-mail.
        await run_block(submit, smtp_port)
        await outbox.newest_text(margaret, "Re: submit", "submitted for approval")
        # The demo's away Grace also has last week's (README says so): this week's has the hours.
        review = await outbox.newest_with(grace, "Timesheet to review: Margaret Hamilton",
                                          "account overview screen")

        # 3. Grace replies `approve` to the Reply-To copied from the page: receipt, notice.
        page = await outbox.page(review)
        assert 'id="html-body"' in page and "/a/" in page  # the HTML part with its links
        reply_to = header_of(page, "Reply-To")
        assert reply_to.startswith("approvals+") and reply_to.endswith("@timebot.localhost")
        await run_block(approve, smtp_port, reply_to)
        await outbox.newest_text(grace, "Re: Timesheet to review", "Approved")
        if OWNER_NOTICES:
            await outbox.wait(margaret, "is approved", "Margaret's notice")

        # 4. Dorothy logs and submits: Linus's review e-mail.
        await run_block(dorothy, smtp_port)
        await outbox.newest_text(dorothy_address, "Re: my hours", "Logged 1 entry")
        await outbox.newest_text(dorothy_address, "Re: submit", "submitted for approval")
        [review] = await outbox.wait(linus, "Timesheet to review: Dorothy Vaughan",
                                     "Linus's review e-mail")

        # 5. Linus rejects with the page's "Answer as linus@…" form.
        page = await outbox.page(review)
        assert f"Answer as {linus}" in page
        action = re.search(r'<form method="post" action="([^"]+)">\s*<textarea name="body"',
                           page)
        assert action is not None
        sent = await http.post(f"{served.base}{action.group(1)}", data={"body": reject},
                               follow_redirects=True)
        assert sent.status_code == 200 and 'id="notice"' in sent.text
        text = await outbox.newest_text(linus, "Re: Timesheet to review", "Rejected")
        assert "Please split the hours by task" in text
        if OWNER_NOTICES:
            [notice] = await outbox.wait(dorothy_address, "was rejected", "Dorothy's notice")
            assert "Please split the hours by task" in await outbox.text(notice)

        # A first start sends no reminder for the weeks of demo history.
        reminders = [title for _, _, title in await outbox.listing()
                     if title.startswith("Please submit your timesheet")]
        assert reminders == []
    assert_clean_exit(served)


def assert_clean_exit(served: Served) -> None:
    assert served.process.returncode == 0, "".join(served.err[-20:])

