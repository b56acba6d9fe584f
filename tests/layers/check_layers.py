#!/usr/bin/env python3
"""Checks that headers follow the layers: every #include "..." in a library folder names a file of that
folder or of a folder its arrows reach in tests/layers/layers.txt. Usage: check_layers.py SOURCE_DIR.
Prints FILE:LINE: FOLDER includes "PATH" (FORBIDDEN may not be seen from FOLDER) for each violation and exits
1 if there is one. An include that resolves to no file of the source tree (a system or package header) is
not a layer's and is left alone. A table line FILE = FOLDER puts one file in FOLDER's layer wherever it sits
(files of a folder that have not yet moved into it)."""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCES = (".hpp", ".cpp", ".h", ".cu", ".cuh")


def read_table(path):
    """{folder: [folders it links]}, in the table's order, and {file: the folder whose layer it is in}."""
    arrows, members = {}, {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if "=" in line:
                file, _, folder = (part.strip() for part in line.partition("="))
                if not file or not folder or file in members:
                    sys.exit(f"{path}:{number}: expected 'FILE = FOLDER' once per file, got '{line}'")
                members[file] = folder
                continue
            folder, sep, targets = line.partition(":")
            if not sep or folder.strip() in arrows:
                sys.exit(f"{path}:{number}: expected 'FOLDER: FOLDER ...' once per folder, got '{line}'")
            arrows[folder.strip()] = targets.split()
    for folder, targets in arrows.items():
        for t in targets:
            if t not in arrows:
                sys.exit(f"{path}: {folder} links '{t}', which the table does not name")
    for file, folder in members.items():
        if folder not in arrows:
            sys.exit(f"{path}: {file} = '{folder}', which the table does not name")
    return arrows, members


def reach(arrows):
    """{folder: the set of folders it may see}: itself and everything its arrows reach."""
    seen = {}
    for folder in arrows:
        todo, seen[folder] = [folder], {folder}
        while todo:
            for t in arrows[todo.pop()]:
                if t not in seen[folder]:
                    seen[folder].add(t)
                    todo.append(t)
    return seen


def owner(rel, folders, members):
    """The table's folder whose layer the source-relative path `rel` is in, or None (tests/, bench/, ...)."""
    if rel in members:
        return members[rel]
    best = None
    for folder in folders:
        if rel == folder or rel.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def included_folder(root, source, path, folders, members):
    """The folder an #include "path" in `source` names, resolved as the compiler does (beside the including
    file, then from the source root, the include path every target has); None for a header outside the tree
    or of no library folder; "" for a file of the tree outside every library folder (tests/, bench/)."""
    for base in (os.path.dirname(source), root):
        candidate = os.path.normpath(os.path.join(base, path))
        if os.path.isfile(candidate):
            rel = os.path.relpath(candidate, root).replace(os.sep, "/")
            if rel.startswith("../"):
                return None
            return owner(rel, folders, members) or ""
    first = path.split("/", 1)[0]  # a library header that does not exist (yet): named by its folder
    return first if "/" in path and first in folders else None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    arrows, members = read_table(os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers.txt"))
    visible = reach(arrows)
    sources = {}  # source-relative path -> the folder whose layer it is in
    for folder in arrows:
        top = os.path.join(root, folder)
        if not os.path.isdir(top):
            continue  # a folder of the table that this checkout lacks
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(SOURCES):
                    rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                    sources[rel] = owner(rel, arrows, members)
    for file in members:
        if not os.path.isfile(os.path.join(root, file)):
            sys.exit(f"tests/layers/layers.txt: {file} = {members[file]}, but there is no such file")
    violations = []
    for rel, folder in sorted(sources.items()):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                seen = included_folder(root, os.path.join(root, rel), m.group(1), arrows, members)
                if seen is None or seen in visible[folder]:
                    continue
                what = seen or "a folder outside the layers"
                violations.append(f'{rel}:{number}: {folder}/ includes "{m.group(1)}": {what} is not '
                                  f"visible from {folder}/ (tests/layers/layers.txt)")
    for v in violations:
        print(v)
    print(f"check_layers: {len(sources)} files of {len(arrows)} folders, {len(violations)} includes across a "
          "layer")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
