#!/usr/bin/env python3
"""Holds docs/design.md and the tree to each other.

Usage: check_design.py CHECK [REPO]   (REPO defaults to the repository this script is in)

CHECK is one of
  layering  every `#include "MODULE/..."` in src/MODULE2/ names MODULE2 itself or a module its
            row of the "may include" table lists; every folder under src/ has a row and a
            bullet in the module list, and every row a folder. Public headers ("strata/...")
            are open to all.
  api       every public header include/strata/*.h has a row in the "| header | offers |"
            table, and every row a header.
  commands  every subcommand the CLI defines (add_subcommand in src/cli/) is in the command
            list of "Commands, errors and output", and every listed command is defined.
Prints one line per violation (file:line: what, where the rule is) and exits 1, or exits 0
silently. Run by `make test` as the CTest tests design.layering, design.api, design.commands.
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


def layering(repo):
    design = os.path.join(repo, "docs", "design.md")
    allowed = read_table(design)
    src = os.path.join(repo, "src")
    modules = {d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))}
    rule = "docs/design.md, Modules"
    for module in sorted(modules - allowed.keys()):
        yield f"src/{module}: a module without a row in the table ({rule})"
    for module in sorted(allowed.keys() - modules):
        yield f"docs/design.md: a row for '{module}', which is no folder under src/"
    with open(design, encoding="utf-8") as f:
        listed = set(re.findall(r"^- `src/([a-z_]+)`", f.read(), re.M))
    for module in sorted(modules - listed):
        yield f"src/{module}: a module without a bullet in the module list ({rule})"
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


def api(repo):
    design = os.path.join(repo, "docs", "design.md")
    with open(design, encoding="utf-8") as f:
        rows = set(re.findall(r"^\| `([a-z_]+\.h)` \|", f.read(), re.M))
    headers = set(os.listdir(os.path.join(repo, "include", "strata")))
    rule = "docs/design.md, Public API"
    for header in sorted(headers - rows):
        yield f"include/strata/{header}: a public header without a row in the table ({rule})"
    for header in sorted(rows - headers):
        yield f"docs/design.md: a row for '{header}', which is no file in include/strata/"


def commands(repo):
    defined = set()
    cli = os.path.join(repo, "src", "cli")
    for name in sorted(os.listdir(cli)):
        with open(os.path.join(cli, name), encoding="utf-8") as f:
            text = f.read()
        for parent, command in re.findall(r"\b(app|bench)\.add_subcommand\(\s*\"([a-z-]+)\"", text):
            defined.add(command if parent == "app" else f"bench {command}")
    with open(os.path.join(repo, "docs", "design.md"), encoding="utf-8") as f:
        text = f.read()
    block = re.search(r"## Commands, errors and output\n\n```\n(.*?)```", text, re.S)
    if not block:
        yield "docs/design.md: no command list under \"Commands, errors and output\""
        return
    listed = set()
    for line in block.group(1).splitlines():
        words = line.split()
        if len(words) < 2 or words[0] != "strata":
            continue
        if words[1] == "bench":
            listed.update(f"bench {c}" for c in words[2].split("|"))
        listed.add(words[1])
    rule = "docs/design.md, Commands, errors and output"
    for command in sorted(defined - listed):
        yield f"src/cli: 'strata {command}' is missing from the command list ({rule})"
    for command in sorted(listed - defined):
        yield f"docs/design.md: 'strata {command}' is listed but no subcommand defines it"


CHECKS = {"layering": layering, "api": api, "commands": commands}


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[1] not in CHECKS:
        sys.exit(f"usage: check_design.py {'|'.join(CHECKS)} [REPO]")
    repo = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    found = list(CHECKS[sys.argv[1]](repo))
    for line in found:
        print(line)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
