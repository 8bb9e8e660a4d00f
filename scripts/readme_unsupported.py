"""Writes README's section on what the embedded service does not offer, from
`service/unsupported.py` (tests/service/test_unsupported.py says when it is stale)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.unsupported import with_readme_section  # noqa: E402

if __name__ == "__main__":
    readme = ROOT / "README.md"
    readme.write_text(with_readme_section(readme.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote the unsupported section of {readme}")
