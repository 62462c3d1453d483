"""Builds a stand-in wheel into DIR, standard library only: ``sglang`` (tests/standins/sglang) by default,
or PACKAGE (``torch``, ``torch_npu``: tests/standins/<PACKAGE>/<PACKAGE>).

    python3 tests/standins/build_wheel.py DIR [VERSION] [PACKAGE]

VERSION defaults to 0.0.0+standin; the file is rewritten only when its content changes.
"""
from __future__ import annotations

import base64
import hashlib
import io
import pathlib
import sys
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
SUMMARY = {"sglang": "the SGLang server (not SGLang)", "torch": "PyTorch (not PyTorch)",
           "torch_npu": "torch_npu (not torch_npu)"}


def main() -> None:
    dest = pathlib.Path(sys.argv[1])
    version = sys.argv[2] if len(sys.argv) > 2 else "0.0.0+standin"
    package = sys.argv[3] if len(sys.argv) > 3 else "sglang"
    src = HERE / package
    dist = f"{package}-{version}.dist-info"
    files: dict[str, bytes] = {}
    for path in sorted((src / package).glob("*.py")):
        files[f"{package}/{path.name}"] = path.read_bytes()
    files[f"{dist}/METADATA"] = (f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n"
                                 f"Summary: ascend.sglang test stand-in of {SUMMARY.get(package, package)}\n").encode()
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
    out = dest / f"{package}-{version.replace('-', '_')}-py3-none-any.whl"
    if not out.exists() or out.read_bytes() != buf.getvalue():
        out.write_bytes(buf.getvalue())
    print(out)


if __name__ == "__main__":
    main()
