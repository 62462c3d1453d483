"""Writes the requirements of the installed sglang distribution, less the excluded names, to a pip
requirements file (sglang_server_install): the PyPI wheel's metadata pins its CUDA build (torch, CUDA
kernels), which the Ascend stack replaces, while the rest (fastapi, transformers, ...) is what the server
needs.  Markers are kept (pip evaluates them); requirements of extras are left out.

    <venv python> sglang_requirements.py DEST EXCLUDED_NAME...

Standard library only; prints the number of requirements written.
"""
import importlib.metadata
import re
import sys


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def main():
    dest, excluded = sys.argv[1], {canonical(n) for n in sys.argv[2:]}
    keep = []
    for line in importlib.metadata.requires("sglang") or []:
        spec, _unused, marker = line.partition(";")
        if "extra" in re.findall(r"[a-z_]+", marker):
            continue
        name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
        if name and canonical(name.group(1)) not in excluded:
            keep.append(line.strip())
    text = "".join(line + "\n" for line in keep)
    try:
        with open(dest, encoding="utf-8") as handle:
            same = handle.read() == text
    except OSError:
        same = False
    if not same:
        with open(dest, "w", encoding="utf-8") as handle:
            handle.write(text)
    print(f"{len(keep)} requirements{'' if same else ' (written)'}")


if __name__ == "__main__":
    main()
