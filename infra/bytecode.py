"""Ship bytecode the Lambda runtime will use: compile every module in the zip (or a folder).

Lambda's code directory is read-only, so a package without ``.pyc`` compiles every module it
imports at every cold start. This puts ``__pycache__/<module>.cpython-311.pyc`` beside every
``.py`` of the artifact, with these properties:

- compiled by the interpreter running this script, which must be the runtime's minor version
  (``python3.11`` in serverless.yml): bytecode of another version is ignored by the runtime;
- ``unchecked-hash`` invalidation (PEP 552): the runtime loads it without comparing the source's
  mtime, which a zip keeps only to 2 seconds (DOS time) and would otherwise make it stale;
- reproducible: entries in sorted order with a fixed date, so one commit gives one artifact.

    python3.11 infra/bytecode.py .serverless/weekly-shop.zip     (the serverless plugin runs it)

``infra/bytecode.js`` runs it after the requirements plugin has put the dependencies in the zip.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import zipfile
from pathlib import Path

RUNTIME = (3, 11)  # the python3.11 Lambda runtime (serverless.yml provider.runtime)
FIXED_DATE = (2020, 1, 1, 0, 0, 0)
TAG = f"cpython-{RUNTIME[0]}{RUNTIME[1]}"


def check_interpreter() -> None:
    if sys.version_info[:2] != RUNTIME:
        version = ".".join(map(str, sys.version_info[:2]))
        raise SystemExit(
            f"infra/bytecode.py: this is Python {version}; the Lambda runtime is "
            f"python{RUNTIME[0]}.{RUNTIME[1]}, and bytecode of another version would be ignored. "
            f"Run the deploy with PYTHON_BIN=python{RUNTIME[0]}.{RUNTIME[1]}."
        )


def bytecode(source: bytes, name: str) -> bytes | None:
    """The .pyc for ``source`` (unchecked hash), or None if it does not compile (some packages
    ship Python 2 or template files named .py; the runtime would not import them either)."""
    try:
        code = compile(source, name, "exec", dont_inherit=True, optimize=0)
    except (SyntaxError, ValueError):
        return None
    source_hash = importlib.util.source_hash(source)
    return bytes(
        importlib._bootstrap_external._code_to_hash_pyc(  # type: ignore[attr-defined]
            code, source_hash, checked=False
        )
    )


def pyc_name(py: str) -> str:
    """``a/b/c.py`` -> ``a/b/__pycache__/c.cpython-311.pyc``."""
    folder, _, file = py.rpartition("/")
    stem = file[: -len(".py")]
    return f"{folder + '/' if folder else ''}__pycache__/{stem}.{TAG}.pyc"


def compile_zip(path: Path) -> tuple[int, int]:
    """Rewrite the zip at ``path`` with a .pyc beside each .py (stale ones dropped); returns
    (modules compiled, files in the new zip)."""
    check_interpreter()
    with zipfile.ZipFile(path) as old:
        entries = [
            (info, old.read(info))
            for info in old.infolist()
            if not info.is_dir() and not info.filename.endswith((".pyc", ".pyo"))
        ]
    files: dict[str, tuple[bytes, int]] = {}
    compiled = 0
    for info, data in entries:
        mode = (info.external_attr >> 16) or 0o644
        files[info.filename] = (data, mode)
        if info.filename.endswith(".py"):
            pyc = bytecode(data, info.filename)
            if pyc is not None:
                files[pyc_name(info.filename)] = (pyc, 0o644)
                compiled += 1
    fd, temporary = tempfile.mkstemp(dir=path.parent, suffix=".zip")
    os.close(fd)
    with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as new:
        for name in sorted(files):
            data, mode = files[name]
            info = zipfile.ZipInfo(name, FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (mode & 0xFFFF) << 16
            new.writestr(info, data)
    Path(temporary).replace(path)
    return compiled, len(files)


def compile_tree(root: Path) -> int:
    """The same for an unpacked task root (the benchmark's): a .pyc beside each .py."""
    check_interpreter()
    compiled = 0
    for py in sorted(root.rglob("*.py")):
        pyc = bytecode(py.read_bytes(), py.relative_to(root).as_posix())
        if pyc is None:
            continue
        target = root / pyc_name(py.relative_to(root).as_posix())
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(pyc)
        compiled += 1
    return compiled


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python3.11 infra/bytecode.py ARTIFACT.zip", file=sys.stderr)
        return 2
    compiled, files = compile_zip(Path(argv[0]))
    print(f"bytecode: {compiled} modules compiled for {TAG} ({files} files in {argv[0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
