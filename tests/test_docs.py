"""The documentation stays in sync: docs/api.md is what docs/gen_api.py writes from the current
sources, and every relative link of README.md and docs/*.md points at a file that exists."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _gen_api():  # docs/ is not a package: load the script by path
    spec = importlib.util.spec_from_file_location("gen_api", DOCS / "gen_api.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_api_page_is_regenerated_byte_for_byte() -> None:
    text = _gen_api().render(ROOT)
    assert (DOCS / "api.md").read_text(encoding="utf-8") == text, "run: python docs/gen_api.py"


def test_the_api_page_lists_every_public_function_with_its_contract() -> None:
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    assert "(no Contract line)" not in text
    assert re.search(r"^- `epsilon\(pair", text, re.M)
    assert "## `certdp.cli" not in text


_LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_relative_links_resolve() -> None:
    broken = []
    for md in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for target in _LINK.findall(md.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            if not (md.parent / path).exists():
                broken.append(f"{md.relative_to(ROOT)}: {target}")
    assert broken == []
