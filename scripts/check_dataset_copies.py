#!/usr/bin/env python3
"""Checks that the repository's dataset archives (datasets/NAME.npz) import to the same
dataset, file for file, as the .npy directories they were made from.

Usage: check_dataset_copies.py STRATA SHARED_DATASETS [REPO]

STRATA is the strata binary; SHARED_DATASETS holds cora/, citeseer/ and amazon-computers/ as
.npy files. Prints one
line per difference and exits 1, or exits 0 silently. A maintainer's check, run by hand where
the .npy copies exist; `make test` does not run it (the repository's tests read nothing outside
it).
"""
import filecmp
import os
import subprocess
import sys
import tempfile

NAMES = ("cora", "citeseer", "amazon-computers")


def files_under(root):
    found = set()
    for folder, _, files in os.walk(root):
        found.update(os.path.relpath(os.path.join(folder, f), root) for f in files)
    return found


def differences(strata, shared, repo):
    with tempfile.TemporaryDirectory() as scratch:
        for name in NAMES:
            sources = {"shared": os.path.join(shared, name),
                       "repo": os.path.join(repo, "datasets", f"{name}.npz")}
            outs = {}
            for kind, source in sources.items():
                outs[kind] = os.path.join(scratch, f"{name}-{kind}")
                subprocess.run([strata, "import", outs[kind], "--npy", source], check=True,
                               stdout=subprocess.DEVNULL)
            a, b = files_under(outs["shared"]), files_under(outs["repo"])
            for path in sorted(a ^ b):
                yield f"{name}: {path} is in only one of the two imports"
            for path in sorted(a & b):
                if not filecmp.cmp(os.path.join(outs["shared"], path),
                                   os.path.join(outs["repo"], path), shallow=False):
                    yield f"{name}: {path} differs between {sources['shared']} and {sources['repo']}"


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.split("\n\n")[1])
    repo = sys.argv[3] if len(sys.argv) > 3 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    found = list(differences(sys.argv[1], sys.argv[2], repo))
    for line in found:
        print(line)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
