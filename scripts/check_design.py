#!/usr/bin/env python3
"""Holds src/ to the module layering of docs/design.md ("Modules": the "may include" table).

Usage: check_layering.py [REPO]   (default: the repository this script is in)

Every `#include "MODULE/..."` in src/MODULE2/ must name MODULE2 itself or a module its row lists;
every folder under src/ must have a row and every row a folder. Public headers ("strata/...")
are open to all. Prints one line per violation (file:line: what, where the rule is) and exits
1, or exits 0 silently. Run by `make test` as the CTest test `layering`.
"""
import os
import re
import sys

HEADER = re.compile(r"^\|\s*module\s*\|\s*may include\s*\|\s*$")
ROW = re.compile(r"^\|\s*([a-z_]+)\s*\|\s*([^|]*)\|\s*$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"')


def read_table(design_path):
    """The table's rows as {module: set of modules it may include}."""
    allowed = {}
    with open(design_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        if not HEADER.match(line):
            continue
        for row in lines[i + 2:]:
            match = ROW.match(row)
            if not match:
                break
            names = [n.strip() for n in match.group(2).split(",")]
            allowed[match.group(1)] = {n for n in names if n and n not in ("–", "-")}
        return allowed
    sys.exit(f"{design_path}: no '| module | may include |' table")


def violations(repo):
    design = os.path.join(repo, "docs", "design.md")
    allowed = read_table(design)
    src = os.path.join(repo, "src")
    modules = {d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))}
    rule = "docs/design.md, Modules"
    for module in sorted(modules - allowed.keys()):
        yield f"src/{module}: a module without a row in the table ({rule})"
    for module in sorted(allowed.keys() - modules):
        yield f"docs/design.md: a row for '{module}', which is no folder under src/"
    for module in sorted(modules & allowed.keys()):
        for root, _, files in os.walk(os.path.join(src, module)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        target = match.group(1)
                        if target in (module, "strata") or target not in modules:
                            continue
                        if target not in allowed[module]:
                            where = os.path.relpath(path, repo)
                            yield (f"{where}:{number}: {module} may not include {target}/ "
                                   f"({rule})")


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    found = list(violations(repo))
    for line in found:
        print(line)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
