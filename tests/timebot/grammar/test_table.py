# ruff: noqa: RUF001 - the en dash of printed-back ranges is what is tested
"""The table: at least 200 inputs with their expected reading.

Today is Wednesday 18 March 2026 in Europe/Berlin. The expected reading is the printed-back
form (entries one a line; "" for nothing to log), or for an error "! position:token | message".
"""

from __future__ import annotations

from datetime import date

import pytest

from timebot.grammar import ParseError, describe_all, parse_entry

TODAY = date(2026, 3, 18)
TZ = "Europe/Berlin"

ROWS: list[tuple[str, str]] = [
    # durations
    ("2h", "2h on Wed 18 Mar 2026"),
    ("2h30", "2h 30m on Wed 18 Mar 2026"),
    ("2h30m", "2h 30m on Wed 18 Mar 2026"),
    ("2h 30m", "2h 30m on Wed 18 Mar 2026"),
    ("2 h 30 min", "2h 30m on Wed 18 Mar 2026"),
    ("2hrs 30mins", "2h 30m on Wed 18 Mar 2026"),
    ("2 hours 30 minutes", "2h 30m on Wed 18 Mar 2026"),
    ("2H30M", "2h 30m on Wed 18 Mar 2026"),
    ("90m", "1h 30m on Wed 18 Mar 2026"),
    ("90min", "1h 30m on Wed 18 Mar 2026"),
    ("90 mins", "1h 30m on Wed 18 Mar 2026"),
    ("90 minutes", "1h 30m on Wed 18 Mar 2026"),
    ("1.5h", "1h 30m on Wed 18 Mar 2026"),
    ("1,5h", "1h 30m on Wed 18 Mar 2026"),
    ("1:30", "1h 30m on Wed 18 Mar 2026"),
    ("0:45", "45m on Wed 18 Mar 2026"),
    ("1.5", "1h 30m on Wed 18 Mar 2026"),
    ("1,5", "1h 30m on Wed 18 Mar 2026"),
    ("2", "2h on Wed 18 Mar 2026"),
    ("24", "24h on Wed 18 Mar 2026"),
    ("24h", "24h on Wed 18 Mar 2026"),
    ("0.25h", "15m on Wed 18 Mar 2026"),
    ("0.1h", "6m on Wed 18 Mar 2026"),
    ("1.33h", "1h 20m on Wed 18 Mar 2026"),
    ("45m", "45m on Wed 18 Mar 2026"),
    ("1h", "1h on Wed 18 Mar 2026"),
    ("1 hour", "1h on Wed 18 Mar 2026"),
    ("3 hrs", "3h on Wed 18 Mar 2026"),
    ("8", "8h on Wed 18 Mar 2026"),
    ("0.5", "30m on Wed 18 Mar 2026"),
    ("12h", "12h on Wed 18 Mar 2026"),
    ("1440m", "24h on Wed 18 Mar 2026"),
    ("1d", "1d on Wed 18 Mar 2026"),
    ("0.5d", "0.5d on Wed 18 Mar 2026"),
    ("1 day", "1d on Wed 18 Mar 2026"),
    ("0,5d", "0.5d on Wed 18 Mar 2026"),
    ("1.0d", "1d on Wed 18 Mar 2026"),
    ("2d", "! 0:2d | A duration in days must be more than 0 and at most 1"),
    ("0d", "! 0:0d | A duration in days must be more than 0 and at most 1"),
    ("0", "! 0:0 | A duration must be more than zero"),
    ("0h", "! 0:0h | A duration must be more than zero"),
    ("0m", "! 0:0m | A duration must be more than zero"),
    ("0.001", "! 0:0.001 | A duration must be more than zero"),
    ("25", "! 0:25 | A bare number means hours, at most 24"),
    ("25h", "! 0:25h | A duration can be at most 24 hours"),
    ("24h30m", "! 0:24h30m | A duration can be at most 24 hours"),
    ("2h 75m", "! 0:2h 75m | The minutes after the hours must be under 60"),
    ("2h75", "! 0:2h75 | The minutes after the hours must be under 60"),
    ("1:75", "! 0:1:75 | The minutes must be under 60"),
    ("1441m", "! 0:1441m | A duration can be at most 24 hours"),
    ("2x", "! 0:2x | I could not read this"),
    ("3rd", "! 0:3rd | I could not read this"),
    ("9-", "! 0:9- | I could not read this"),
    ("2h30x", "! 0:2h30x | I could not read this"),
    ("9am", "! 0:9am | I could not read this"),
    ("10%", "! 0:10% | I could not read this"),
    ("1.5h30m", "! 0:1.5h30m | I could not read this"),
    # ranges
    ("9:00-11:30", "9:00–11:30 (2h 30m) on Wed 18 Mar 2026"),
    ("9-11:30", "9:00–11:30 (2h 30m) on Wed 18 Mar 2026"),
    ("9am-1pm", "9:00–13:00 (4h) on Wed 18 Mar 2026"),
    ("13:00–17:00", "13:00–17:00 (4h) on Wed 18 Mar 2026"),
    ("13:00—17:00", "13:00–17:00 (4h) on Wed 18 Mar 2026"),
    ("9 - 11", "9:00–11:00 (2h) on Wed 18 Mar 2026"),
    ("9:00 - 11:30", "9:00–11:30 (2h 30m) on Wed 18 Mar 2026"),
    ("9:00 -11:30", "9:00–11:30 (2h 30m) on Wed 18 Mar 2026"),
    ("9:00- 11:30", "9:00–11:30 (2h 30m) on Wed 18 Mar 2026"),
    ("1-3pm", "13:00–15:00 (2h) on Wed 18 Mar 2026"),
    ("9-1pm", "9:00–13:00 (4h) on Wed 18 Mar 2026"),
    ("11-1pm", "11:00–13:00 (2h) on Wed 18 Mar 2026"),
    ("10-11am", "10:00–11:00 (1h) on Wed 18 Mar 2026"),
    ("9:30am-12:15pm", "9:30–12:15 (2h 45m) on Wed 18 Mar 2026"),
    ("9:30 am - 12:15 pm", "9:30–12:15 (2h 45m) on Wed 18 Mar 2026"),
    ("9a.m.-1p.m.", "9:00–13:00 (4h) on Wed 18 Mar 2026"),
    ("9-17", "9:00–17:00 (8h) on Wed 18 Mar 2026"),
    ("22:00-24:00", "22:00–24:00 (2h) on Wed 18 Mar 2026"),
    ("22:00-0:00", "22:00–24:00 (2h) on Wed 18 Mar 2026"),
    ("12am-1am", "0:00–1:00 (1h) on Wed 18 Mar 2026"),
    ("12pm-1pm", "12:00–13:00 (1h) on Wed 18 Mar 2026"),
    ("0:00-24:00", "0:00–24:00 (24h) on Wed 18 Mar 2026"),
    ("8-12 (4h)", "8:00–12:00 (4h) on Wed 18 Mar 2026"),
    ("8-12 (4h 0m)", "8:00–12:00 (4h) on Wed 18 Mar 2026"),
    ("8-12 (3h)", "! 0:8-12 (3h) | This range lasts 4h, not 3h"),
    ("8-12 (x)", "! 5:(x) | Expected a duration in the brackets after the range"),
    ("8-12 ()", "! 5:() | Expected a duration in the brackets after the range"),
    ("9am-1pm (4h)", "9:00–13:00 (4h) on Wed 18 Mar 2026"),
    ("11:30-11:30", "! 0:11:30-11:30 | The range ends before it starts"),
    ("17-9", "! 0:17-9 | The range ends before it starts"),
    ("25:00-26:00", "! 0:25:00-26:00 | No such time of day"),
    ("9:60-10", "! 0:9:60-10 | The minutes must be under 60"),
    ("13pm-2pm", "! 0:13pm-2pm | With am/pm the hour must be 1 to 12"),
    ("0am-1am", "! 0:0am-1am | With am/pm the hour must be 1 to 12"),
    ("9.00-11", "! 0:9.00-11 | I could not read this"),
    ("24-25", "! 0:24-25 | No such time of day"),
    ("9-11:30 2h", "! 8:2h | A second duration"),
    ("2h 9-11", "! 3:9-11 | A second duration"),
    ("9-11, @a", "9:00–11:00 (2h) on Wed 18 Mar 2026 · @a"),
    # dates
    ("2h today", "2h on Wed 18 Mar 2026"),
    ("2h yesterday", "2h on Tue 17 Mar 2026"),
    ("2h monday", "2h on Mon 16 Mar 2026"),
    ("2h mon", "2h on Mon 16 Mar 2026"),
    ("2h tue", "2h on Tue 17 Mar 2026"),
    ("2h tues", "2h on Tue 17 Mar 2026"),
    ("2h wed", "2h on Wed 18 Mar 2026"),
    ("2h wednesday", "2h on Wed 18 Mar 2026"),
    ("2h thu", "2h on Thu 12 Mar 2026"),
    ("2h thursday", "2h on Thu 12 Mar 2026"),
    ("2h fri", "2h on Fri 13 Mar 2026"),
    ("2h sat", "2h on Sat 14 Mar 2026"),
    ("2h sun", "2h on Sun 15 Mar 2026"),
    ("2h SUNDAY", "2h on Sun 15 Mar 2026"),
    ("2h last mon", "2h on Mon 16 Mar 2026"),
    ("2h last wed", "2h on Wed 11 Mar 2026"),
    ("2h last friday", "2h on Fri 13 Mar 2026"),
    ("2h last sun", "2h on Sun 15 Mar 2026"),
    ("2h 2026-03-15", "2h on Sun 15 Mar 2026"),
    ("2h 2026-3-5", "2h on Thu 5 Mar 2026"),
    ("2h 15.03.", "2h on Sun 15 Mar 2026"),
    ("2h 15.03.2026", "2h on Sun 15 Mar 2026"),
    ("2h 15.3.", "2h on Sun 15 Mar 2026"),
    ("2h 15.03.25", "2h on Sat 15 Mar 2025"),
    ("2h 24.12.", "2h on Wed 24 Dec 2025"),
    ("2h 18.03.", "2h on Wed 18 Mar 2026"),
    ("2h 19.03.", "2h on Wed 19 Mar 2025"),
    ("2h 29.02.", "2h on Thu 29 Feb 2024"),
    ("2h 2026-12-24", "2h on Thu 24 Dec 2026"),
    ("2h 31.02.", "! 3:31.02. | There is no day 31 in Feb"),
    ("2h 30.02.2026", "! 3:30.02.2026 | There is no day 30 in Feb"),
    ("2h 2026-02-29", "! 3:2026-02-29 | There is no day 29 in Feb"),
    ("2h 2026-13-01", "! 3:2026-13-01 | No such month"),
    ("2h 32.01.", "! 3:32.01. | There is no day 32 in Jan"),
    ("2h 15.13.", "! 3:15.13. | No such month"),
    ("2h 1969-01-01", "! 3:1969-01-01 | The year must be between 1970 and 2999"),
    ("2h on friday", "2h on Fri 13 Mar 2026"),
    ("2h on 15.03.", "2h on Sun 15 Mar 2026"),
    ("2h 16 Mar 2026", "2h on Mon 16 Mar 2026"),
    ("2h Mon 16 Mar 2026", "2h on Mon 16 Mar 2026"),
    ("2h on Mon 16 Mar 2026", "2h on Mon 16 Mar 2026"),
    ("2h Tue 16 Mar 2026", "! 3:Tue 16 Mar 2026 | 16 Mar 2026 is a Monday, not a Tuesday"),
    ("2h 16 March", "2h on Mon 16 Mar 2026"),
    ("2h March 16", "2h on Mon 16 Mar 2026"),
    ("2h Mar 16, 2026", "2h on Mon 16 Mar 2026"),
    ("2h 1 Jan", "2h on Thu 1 Jan 2026"),
    ("2h friday,", "2h on Fri 13 Mar 2026"),
    ("friday 2h", "2h on Fri 13 Mar 2026"),
    ("yesterday 9-12", "9:00–12:00 (3h) on Tue 17 Mar 2026"),
    ("2h today yesterday", "2h on Wed 18 Mar 2026 · yesterday"),
    ("2h 2026-03-15 @a today", "2h on Sun 15 Mar 2026 · @a · “today”"),
    ("2h 15.03", "2h on Wed 18 Mar 2026 · 15.03"),
    ("2h on", "2h on Wed 18 Mar 2026 · on"),
    ("2h last", "2h on Wed 18 Mar 2026 · last"),
    ("2h on the train", "2h on Wed 18 Mar 2026 · on the train"),
    # targets
    ("2h @acme", "2h on Wed 18 Mar 2026 · @acme"),
    ("2h @acme/website", "2h on Wed 18 Mar 2026 · @acme/website"),
    ("2h @acme/website/design", "2h on Wed 18 Mar 2026 · @acme/website/design"),
    ("2h @Acme", "2h on Wed 18 Mar 2026 · @Acme"),
    ('2h @"Acme Corp"/website', "2h on Wed 18 Mar 2026 · @“Acme Corp”/website"),
    ("2h @“Acme Corp”", "2h on Wed 18 Mar 2026 · @“Acme Corp”"),
    ("2h @acme,", "2h on Wed 18 Mar 2026 · @acme"),
    ("2h @", "! 3:@ | A project name is missing"),
    ("2h @acme/", "! 3:@acme/ | A project name is missing"),
    ("2h @/x", "! 3:@/x | A project name is missing"),
    ("2h @a @b", "! 6:@b | A second project"),
    ("2h @acme@home", "2h on Wed 18 Mar 2026 · @acme@home"),
    ("2h @acme/web site", "2h on Wed 18 Mar 2026 · @acme/web · “site”"),
    ("2h @café", "2h on Wed 18 Mar 2026 · @café"),
    ('2h @"Acme"x', '! 3:@"Acme"x | Expected / or a space after the quoted name'),
    ("@acme 2h", "2h on Wed 18 Mar 2026 · @acme"),
    ("2h @acme/website;", "2h on Wed 18 Mar 2026 · @acme/website"),
    # flags
    ("2h @a $", "2h on Wed 18 Mar 2026 · @a · billable"),
    ("2h @a !nb", "2h on Wed 18 Mar 2026 · @a · non-billable"),
    ("2h @a billable", "2h on Wed 18 Mar 2026 · @a · billable"),
    ("2h @a non-billable", "2h on Wed 18 Mar 2026 · @a · non-billable"),
    ("2h @a nonbillable", "2h on Wed 18 Mar 2026 · @a · non-billable"),
    ("2h @a #wfh", "2h on Wed 18 Mar 2026 · @a · wfh"),
    ("2h @a wfh", "2h on Wed 18 Mar 2026 · @a · wfh"),
    ("2h @a WFH", "2h on Wed 18 Mar 2026 · @a · wfh"),
    ("2h @a #WFH", "2h on Wed 18 Mar 2026 · @a · wfh"),
    ("2h @a $ !nb", "! 8:!nb | Both billable and non-billable"),
    ("2h @a $ $", "2h on Wed 18 Mar 2026 · @a · billable"),
    ("2h @a billable $", "2h on Wed 18 Mar 2026 · @a · billable"),
    ("2h @a non-billable billable", "! 19:billable | Both billable and non-billable"),
    ("$ #wfh 2h @a", "2h on Wed 18 Mar 2026 · @a · billable · wfh"),
    ("2h @a $ #wfh !nb", "! 13:!nb | Both billable and non-billable"),
    # comments
    ("2h @a fixing the header", "2h on Wed 18 Mar 2026 · @a · “fixing the header”"),
    ("2h @a “fixing the header”", "2h on Wed 18 Mar 2026 · @a · “fixing the header”"),
    ('2h @a "fixing the header"', "2h on Wed 18 Mar 2026 · @a · “fixing the header”"),
    ("2h @a «fix»", "2h on Wed 18 Mar 2026 · @a · “fix”"),
    ("2h @a „fix“", "2h on Wed 18 Mar 2026 · @a · “fix”"),
    ("2h @a “fix” more", "2h on Wed 18 Mar 2026 · @a · “fix more”"),
    ("2h @a “unclosed", "! 6:“unclosed | This quote is not closed"),
    ("2h @a “a;b”", "2h on Wed 18 Mar 2026 · @a · “a;b”"),
    ("2h @a “today 3h”", "2h on Wed 18 Mar 2026 · @a · “today 3h”"),
    ("2h @a mail bob@example.com", "2h on Wed 18 Mar 2026 · @a · “mail bob@example.com”"),
    ("2h @a fix #123", "2h on Wed 18 Mar 2026 · @a · “fix #123”"),
    ("2h @a $50 budget", "2h on Wed 18 Mar 2026 · @a · “$50 budget”"),
    ("2h @a fix 3 bugs", "2h on Wed 18 Mar 2026 · @a · “fix 3 bugs”"),
    ("2h @a 2026 roadmap", "2h on Wed 18 Mar 2026 · @a · “2026 roadmap”"),
    ("@a fix 3 bugs", "3h on Wed 18 Mar 2026 · @a · “fix bugs”"),
    ("@a 2026 roadmap", "! 3:2026 | A bare number means hours, at most 24"),
    ("2h @a   lots   of   space", "2h on Wed 18 Mar 2026 · @a · “lots of space”"),
    ("2h @a naïve comment", "2h on Wed 18 Mar 2026 · @a · “naïve comment”"),
    ("2h @a “”", "2h on Wed 18 Mar 2026 · @a"),
    ('2h @a "say \\"hi\\""', '2h on Wed 18 Mar 2026 · @a · “say "hi"”'),
    ("2h @a “x” “y”", "2h on Wed 18 Mar 2026 · @a · “x y”"),
    ("2h @a don't panic", "2h on Wed 18 Mar 2026 · @a · “don't panic”"),
    ("2h @a fixing the header on friday", "2h on Fri 13 Mar 2026 · @a · “fixing the header”"),
    ("2h, @a, fixing", "2h on Wed 18 Mar 2026 · @a · “fixing”"),
    ("2h @a 3 hours of meetings", "2h on Wed 18 Mar 2026 · @a · “3 hours of meetings”"),
    ("2h @a v2.0 release", "2h on Wed 18 Mar 2026 · @a · “v2.0 release”"),
    ("2h @a -", "2h on Wed 18 Mar 2026 · @a · “-”"),
    ("2h @a “C:\\temp”", "2h on Wed 18 Mar 2026 · @a · “C:\\temp”"),
    ('2h @a "a\nb"', '! 6:"a | This quote is not closed'),
    # absences
    ("1d vacation friday", "1d on Fri 13 Mar 2026 · vacation"),
    ("0.5d sick", "0.5d on Wed 18 Mar 2026 · sick"),
    ("4h sick leave", "4h on Wed 18 Mar 2026 · sick leave"),
    ("1d vacation friday “family trip”", "1d on Fri 13 Mar 2026 · vacation · “family trip”"),
    ("1d vacation family trip", "1d on Wed 18 Mar 2026 · vacation family trip"),
    ("8h holiday 2026-03-02", "8h on Mon 2 Mar 2026 · holiday"),
    ("1d vac", "1d on Wed 18 Mar 2026 · vac"),
    ("4h sick yesterday", "4h on Tue 17 Mar 2026 · sick"),
    ("1 day parental leave last mon", "1d on Mon 16 Mar 2026 · parental leave"),
    # several entries
    ("2h @a; 3h @b", "2h on Wed 18 Mar 2026 · @a\n3h on Wed 18 Mar 2026 · @b"),
    ("2h @a;3h @b", "2h on Wed 18 Mar 2026 · @a\n3h on Wed 18 Mar 2026 · @b"),
    ("2h @a\n3h @b", "2h on Wed 18 Mar 2026 · @a\n3h on Wed 18 Mar 2026 · @b"),
    ("2h @a;;3h @b", "2h on Wed 18 Mar 2026 · @a\n3h on Wed 18 Mar 2026 · @b"),
    ("2h @a;", "2h on Wed 18 Mar 2026 · @a"),
    ("; 2h @a", "2h on Wed 18 Mar 2026 · @a"),
    ("2h @a\n\n", "2h on Wed 18 Mar 2026 · @a"),
    ("2h @a; @b", "! 7:@b | How long? No duration in this entry"),
    ("\n2h @a\n  \n1h @b yesterday", "2h on Wed 18 Mar 2026 · @a\n1h on Tue 17 Mar 2026 · @b"),
    ("2h @a “x;y”; 1h @b", "2h on Wed 18 Mar 2026 · @a · “x;y”\n1h on Wed 18 Mar 2026 · @b"),
    ("2h @a\r\n1h @b", "2h on Wed 18 Mar 2026 · @a\n1h on Wed 18 Mar 2026 · @b"),
    (
        "1d vacation mon; 1d vacation tue; 0.5d sick wed",
        "1d on Mon 16 Mar 2026 · vacation\n"
        "1d on Tue 17 Mar 2026 · vacation\n"
        "0.5d on Wed 18 Mar 2026 · sick",
    ),
    # whole form
    (
        "2h 30m on Mon 16 Mar 2026 · @acme/website · billable · wfh · “fixing the header”",
        "2h 30m on Mon 16 Mar 2026 · @acme/website · billable · wfh · “fixing the header”",
    ),
    (
        "9:00–11:30 (2h 30m) on Mon 16 Mar 2026 · @acme",
        "9:00–11:30 (2h 30m) on Mon 16 Mar 2026 · @acme",
    ),
    ("1d on Fri 13 Mar 2026 · vacation", "1d on Fri 13 Mar 2026 · vacation"),
    ("2h on Wed 18 Mar 2026 · 3 hours", "2h on Wed 18 Mar 2026 · 3 hours"),
    ("2h·@a·wfh", "2h on Wed 18 Mar 2026 · @a · wfh"),
    # no duration, empty
    ("", ""),
    ("   ", ""),
    ("fixing the header", "! 0:fixing the header | How long? No duration in this entry"),
    ("@acme", "! 0:@acme | How long? No duration in this entry"),
    ("today @acme", "! 0:today @acme | How long? No duration in this entry"),
    ("$", "! 0:$ | How long? No duration in this entry"),
    ("“just a comment”", "! 0:“just a comment” | How long? No duration in this entry"),
]


def reading(text: str) -> str:
    result = parse_entry(text, TZ, TODAY)
    if isinstance(result, ParseError):
        return f"! {result.position}:{result.token} | {result.message}"
    return describe_all(result)


def test_the_table_is_big_enough_and_has_no_duplicates() -> None:
    inputs = [text for text, _ in ROWS]
    assert len(inputs) >= 200
    assert len(set(inputs)) == len(inputs)
    assert sum(expected.startswith("!") for _, expected in ROWS) >= 40


@pytest.mark.parametrize(("text", "expected"), ROWS, ids=[repr(t)[:40] for t, _ in ROWS])
def test_reading(text: str, expected: str) -> None:
    assert reading(text) == expected


@pytest.mark.parametrize(
    "text", [text for text, expected in ROWS if expected and not expected.startswith("!")]
)
def test_the_printed_form_reads_back_the_same(text: str) -> None:
    entries = parse_entry(text, TZ, TODAY)
    assert isinstance(entries, list)
    again = parse_entry(describe_all(entries), TZ, date(2031, 1, 1))
    assert again == entries
