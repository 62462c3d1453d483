"""Builds the stand-in ``sglang`` wheel (tests/standins/sglang) into DIR, standard library only.

    python3 tests/standins/build_wheel.py DIR [VERSION]

VERSION defaults to 0.0.0+standin; the file is rewritten only when its content changes.
"""
from __future__ import annotations

import base64
import hashlib
import io
import pathlib
import sys
import zipfile

SRC = pathlib.Path(__file__).resolve().parent / "sglang"


def main() -> None:
    dest = pathlib.Path(sys.argv[1])
    version = sys.argv[2] if len(sys.argv) > 2 else "0.0.0+standin"
    dist = f"sglang-{version}.dist-info"
    files: dict[str, bytes] = {}
    for path in sorted((SRC / "sglang").glob("*.py")):
        files[f"sglang/{path.name}"] = path.read_bytes()
    files[f"{dist}/METADATA"] = (f"Metadata-Version: 2.1\nName: sglang\nVersion: {version}\n"
                                 "Summary: ascend.sglang test stand-in of the SGLang server (not SGLang)\n").encode()
    files[f"{dist}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: ascend.sglang build_wheel.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / f"sglang-{version.replace('-', '_')}-py3-none-any.whl"
    if not out.exists() or out.read_bytes() != buf.getvalue():
        out.write_bytes(buf.getvalue())
    print(out)


if __name__ == "__main__":
    main()
