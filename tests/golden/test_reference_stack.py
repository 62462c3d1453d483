"""The reference environment of the reference release (profiles/_releases.yml) is the package list of the
document that records the image the published figures were measured in (002), version for version."""

from __future__ import annotations

import re

from seeddoc import SEEDS_DIR

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._releases import load_release_tables


def documented_packages() -> tuple[dict[str, str], str]:
    (path,) = sorted(SEEDS_DIR.glob("002_*.txt"))
    text = path.read_text(encoding="utf-8")
    packages = {}
    for line in text.splitlines():
        match = re.fullmatch(r"([A-Za-z][\w.-]*)\s{2,}(\d\S*)", line.strip())
        if match:
            packages[match.group(1)] = match.group(2)
    image = re.search(r"^Image:\s*(\S+)", text, re.MULTILINE)
    return packages, image.group(1) if image else ""


def test_reference_stack_is_the_documented_image():
    table = load_release_tables()["sglang"]
    stack = table.stack(table.reference)
    packages, image = documented_packages()
    assert stack.packages == packages
    # The image tag names its CANN release (cann8.3.rc2-...).
    cann = re.search(r"cann(\d+)\.(\d+)\.(rc\d+|\d+)", image)
    assert cann and stack.cann == f"{cann.group(1)}.{cann.group(2)}.{cann.group(3).upper()}"
