"""House rules checked from the source: Contract lines, layering, and the small verifier."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "certdp"


def _public_functions(path: Path) -> list[tuple[str, ast.FunctionDef]]:
    tree = ast.parse(path.read_text())
    out = []
    for node in tree.body:
        nodes = [node]
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            nodes += [n for n in node.body if isinstance(n, ast.FunctionDef)]
        out += [(path.name, n) for n in nodes if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
    return out


def test_every_public_function_states_its_contract() -> None:
    missing = [
        f"{name}:{fn.lineno} {fn.name}"
        for path in PKG.rglob("*.py")
        if "cli" not in path.parts
        for name, fn in _public_functions(path)
        if "Contract:" not in (ast.get_docstring(fn) or "")
    ]
    assert missing == []


def _imports(path: Path) -> set[str]:
    mods = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            mods.add(node.module)
        elif isinstance(node, ast.Import):
            mods.update(a.name for a in node.names)
    return mods


def test_only_the_enclosure_core_imports_flint() -> None:
    offenders = [
        str(p)
        for p in PKG.rglob("*.py")
        if "enclose" not in p.parts and any(m == "flint" or m.startswith("flint.") for m in _imports(p))
    ]
    assert offenders == []


def test_layers_import_downward_only() -> None:
    rank = {"enclose": 0, "pairs": 1, "notions": 2, "calibrate": 3, "cert": 3, "sweep": 3, "cli": 4}
    bad = []
    for p in PKG.rglob("*.py"):
        layer = next((part for part in p.relative_to(PKG).parts if part in rank), None)
        if layer is None:
            continue
        for m in _imports(p):
            parts = m.split(".")
            if parts[0] == "certdp" and len(parts) > 1 and parts[1] in rank and rank[parts[1]] > rank[layer]:
                bad.append(f"{p.relative_to(PKG)} imports {m}")
    assert bad == []


def test_the_verifier_stays_small() -> None:
    verify = PKG / "cert" / "verify.py"
    mods = _imports(verify)
    assert not any(m.startswith(("certdp.calibrate", "certdp.cli", "certdp.adapters")) for m in mods)
    assert len(verify.read_text().splitlines()) < 200


def test_product_files_cite_only_public_sources() -> None:
    """The repository stands alone: product files cite docs/math.md and papers by arXiv id, never the
    project's internal notes file or the internal names of the papers (seed numbers, their folder)."""
    import re

    root = PKG.parent
    files = [root / "README.md"]
    for folder in ("docs", "certdp", "proofs_checks", "benchmarks"):
        files += sorted(p for p in (root / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    internal = re.compile(r"MATH[.]md|(?i:seed\s*0\d\d|seeds[/])")  # written so that it does not match itself
    offenders = []
    for path in files:
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if internal.search(line):
                offenders.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    assert offenders == []
