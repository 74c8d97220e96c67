"""Every Python block of README.md and docs/*.md runs, each in a fresh
process and a fresh working directory (it may write ``agent.db``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def blocks() -> list[tuple[str, str]]:
    found = []
    for path in FILES:
        text = path.read_text()
        for match in BLOCK.finditer(text):
            line = text[: match.start()].count("\n") + 1
            found.append((f"{path.relative_to(ROOT)}:{line}", match.group(1)))
    return found


def test_the_docs_have_python_examples() -> None:
    where = {w.split(":")[0] for w, _ in blocks()}
    assert {"README.md", "docs/python.md"} <= where


@pytest.mark.parametrize("where,code", blocks(), ids=[w for w, _ in blocks()])
def test_example_runs(where: str, code: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=os.environ
    )
    assert done.returncode == 0, f"{where}:\n{done.stderr}"
