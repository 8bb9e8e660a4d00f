"""tests/suite_timeline.py: an xdist run with it ends with where its time went, file by file."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_an_xdist_run_ends_with_its_files_by_time(tmp_path: Path) -> None:
    (tmp_path / "test_quick.py").write_text("def test_a():\n    pass\n")
    (tmp_path / "test_slower.py").write_text(
        "import time\n\n\ndef test_b():\n    time.sleep(0.5)\n\n\ndef test_c():\n    pass\n")
    timeline = tmp_path / "timeline.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"),
         "--rootdir", str(tmp_path), "-p", "no:cacheprovider", "-p", "tests.suite_timeline",
         "-n", "2", "--dist", "loadfile", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "SUITE_TIMELINE": str(timeline)},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    section = run.stdout.split("timeline by file", 1)[1]
    longest = section.split("longest files", 1)[1].splitlines()[1:3]
    assert "test_slower.py" in longest[0] and "test_quick.py" in longest[1], section
    rows = [json.loads(line) for line in timeline.read_text().splitlines()]
    assert {(row["nodeid"].split("::")[1], row["when"]) for row in rows} == {
        (name, when) for name in ("test_a", "test_b", "test_c")
        for when in ("setup", "call", "teardown")}
