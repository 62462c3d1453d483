"""ascend.sglang.sglang_wheelhouse for real (ansible-playbook, connection local), in one playbook: the first copy sends
every file in one archive; a second changes nothing; a changed wheel is the only one sent again, a file that only
lost its mode gets it back without a transfer, and a file the source does not hold stays; check mode reports the
difference and writes nothing."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.ansible


def test_copies_only_what_differs_in_one_transfer(tmp_path):
    src, dest, out = tmp_path / "wheels", tmp_path / "copied", tmp_path / "results.json"
    (src / "sub").mkdir(parents=True)
    for name, data in (("a-1.0-py3-none-any.whl", b"a" * 3000), ("b-2.0-py3-none-any.whl", b"b" * 10),
                       ("sub/c-1.0-py3-none-any.whl", b"c")):
        (src / name).write_bytes(data)
    copy = {"ascend.sglang.sglang_wheelhouse": {"src": str(src), "dest": str(dest)}}
    change = (f"printf x >> {src}/b-2.0-py3-none-any.whl && touch -d @1700000000 {src}/b-2.0-py3-none-any.whl && "
              f"chmod 0600 {dest}/sub/c-1.0-py3-none-any.whl && printf keep > {dest}/mine.whl")
    tasks = [
        {"name": "first", "register": "first", **copy},
        {"name": "again", "register": "again", **copy},
        {"name": "change", "ansible.builtin.shell": change, "changed_when": False},
        {"name": "check", "register": "check", "check_mode": True, **copy},
        {"name": "after", "register": "after", **copy},
        {"name": "save", "ansible.builtin.copy": {
            "content": "{{ {'first': first, 'again': again, 'check': check, 'after': after} | to_json }}",
            "dest": str(out), "mode": "0644"}},
    ]
    (tmp_path / "play.yml").write_text(json.dumps([{"hosts": "localhost", "gather_facts": False,
                                                    "connection": "local", "tasks": tasks,
                                                    "vars": {"ansible_python_interpreter": sys.executable}}]))
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    run = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", str(tmp_path / "play.yml")], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    r = json.loads(out.read_text())
    every = ["a-1.0-py3-none-any.whl", "b-2.0-py3-none-any.whl", "sub/c-1.0-py3-none-any.whl"]
    assert r["first"]["changed"] and r["first"]["transfer"] == every
    assert r["first"]["written"] == [str(dest / n) for n in every]
    assert not r["again"]["changed"] and r["again"]["transfer"] == [] and r["again"]["written"] == []
    assert r["check"]["changed"] and r["check"]["transfer"] == ["b-2.0-py3-none-any.whl"]
    assert r["check"]["chmod"] == ["sub/c-1.0-py3-none-any.whl"] and r["check"]["written"] == []
    assert r["after"]["changed"] and r["after"]["written"] == [str(dest / "b-2.0-py3-none-any.whl")]
    assert r["after"]["chmod"] == ["sub/c-1.0-py3-none-any.whl"]
    for name in every:
        copied = dest / name
        assert copied.read_bytes() == (src / name).read_bytes(), name
        assert stat.S_IMODE(copied.stat().st_mode) == 0o644 and int(copied.stat().st_mtime) == int((src / name).stat().st_mtime)
    assert (dest / "mine.whl").read_bytes() == b"keep"
