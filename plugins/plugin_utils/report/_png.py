# Copyright: ascend.sglang contributors
# Apache License 2.0
"""A tiny PNG writer (zlib + struct) and the bar chart of measured vs published benchmark figures.

Pure Python, standard library only, so the chart needs nothing installed on the controller.
Text is drawn with a built-in 5x7 bitmap font (upper-case letters, digits, a few symbols).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any, Mapping, Sequence

RGB = tuple[int, int, int]
WHITE: RGB = (255, 255, 255)
BLACK: RGB = (0, 0, 0)
GREY: RGB = (160, 160, 160)
LIGHT: RGB = (225, 225, 225)
MEASURED: RGB = (31, 119, 180)
PUBLISHED: RGB = (150, 150, 150)
BAD: RGB = (214, 39, 40)

# 5x7 glyphs, one string of 7 rows per character ("#" = ink).
_FONT_ROWS = {
    "A": ".###.#...##...#######...##...##...#", "B": "####.#...##...#####.#...##...#####.",
    "C": ".###.#...##....#....#....#...#.###.", "D": "####.#...##...##...##...##...#####.",
    "E": "######....#....####.#....#....#####", "F": "######....#....####.#....#....#....",
    "G": ".###.#...##....#.####...##...#.###.", "H": "#...##...##...#######...##...##...#",
    "I": ".###...#....#....#....#....#...###.", "J": "..###...#....#....#....#.#..#..##..",
    "K": "#...##..#.#.#..##...#.#..#..#.#...#", "L": "#....#....#....#....#....#....#####",
    "M": "#...###.###.#.##...##...##...##...#", "N": "#...###..##.#.##..###...##...##...#",
    "O": ".###.#...##...##...##...##...#.###.", "P": "####.#...##...#####.#....#....#....",
    "Q": ".###.#...##...##...##.#.##..#..##.#", "R": "####.#...##...#####.#.#..#..#.#...#",
    "S": ".#####....#.....###.....#....#####.", "T": "#####..#....#....#....#....#....#..",
    "U": "#...##...##...##...##...##...#.###.", "V": "#...##...##...##...##...#.#.#...#..",
    "W": "#...##...##...##.#.##.#.##.#.#.#.#.", "X": "#...##...#.#.#...#...#.#.#...##...#",
    "Y": "#...##...#.#.#...#....#....#....#..", "Z": "#####....#...#...#...#...#....#####",
    "0": ".###.#...##..###.#.###..##...#.###.", "1": "..#...##....#....#....#....#...###.",
    "2": ".###.#...#....#...#...#...#...#####", "3": "#####...#...#.....#.....##...#.###.",
    "4": "...#...##..#.#.#..#.#####...#....#.", "5": "######....####.....#....##...#.###.",
    "6": "..##..#...#....####.#...##...#.###.", "7": "#####....#...#...#...#....#....#...",
    "8": ".###.#...##...#.###.#...##...#.###.", "9": ".###.#...##...#.####....#...#..##..",
    " ": "." * 35, ".": "." * 25 + ".##...##..", ",": "." * 20 + ".##...##....#..",
    "-": "." * 15 + "#####" + "." * 15, "_": "." * 30 + "#####", ":": "......##...##........##...##.......",
    "/": "....#....#...#...#...#...#....#....", "(": "...#...#...#....#....#.....#.....#.",
    ")": ".#.....#.....#....#....#...#...#...", "%": "##...##..#...#...#...#...#..##...##",
    "=": "..........#####.....#####..........", "+": ".......#....#..#####..#....#.......",
    "*": ".......#..#.#.#.###.#.#.#..#.......", "?": ".###.#...#....#...#...#.........#..",
    "<": "...#...#...#...#.....#.....#.....#.", ">": ".#.....#.....#.....#...#...#...#...",
}
FONT = {ch: [rows[i * 5:(i + 1) * 5] for i in range(7)] for ch, rows in _FONT_ROWS.items()}


class Canvas:
    def __init__(self, width: int, height: int, background: RGB = WHITE) -> None:
        self.width, self.height = width, height
        self.rows = [bytearray(bytes(background) * width) for _unused in range(height)]

    def rect(self, x0: int, y0: int, x1: int, y1: int, color: RGB) -> None:
        """Fill [x0, x1) x [y0, y1), clipped to the canvas."""
        x0, x1 = max(0, min(x0, x1)), min(self.width, max(x0, x1))
        y0, y1 = max(0, min(y0, y1)), min(self.height, max(y0, y1))
        if x0 >= x1:
            return
        span = bytes(color) * (x1 - x0)
        for y in range(y0, y1):
            self.rows[y][x0 * 3:x1 * 3] = span

    def text(self, x: int, y: int, text: str, color: RGB = BLACK, scale: int = 1) -> int:
        """Draw ``text`` (upper-cased; unknown characters as '?'); returns the x after it."""
        for ch in text.upper():
            glyph = FONT.get(ch, FONT["?"])
            for gy, row in enumerate(glyph):
                for gx, cell in enumerate(row):
                    if cell == "#":
                        self.rect(x + gx * scale, y + gy * scale, x + (gx + 1) * scale, y + (gy + 1) * scale, color)
            x += 6 * scale
        return x

    def png(self) -> bytes:
        return encode_png(self.width, self.height, self.rows)


def text_width(text: str, scale: int = 1) -> int:
    return len(text) * 6 * scale - scale if text else 0


def encode_png(width: int, height: int, rows: Sequence[bytes | bytearray]) -> bytes:
    """8-bit RGB PNG of ``rows`` (each width x 3 bytes), filter type 0 on every scanline."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes(row) for row in rows)
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))


def _short(value: float | None) -> str:
    if value is None:
        return "N/A"
    if value >= 100000:
        return f"{value / 1000:.0f}K"
    if value >= 1000:
        return f"{value:.0f}"
    return f"{value:.2f}" if value < 100 else f"{value:.1f}"


def bench_chart(title: str, comparison: Sequence[Mapping[str, Any]], verdict_line: str = "",
                width: int = 760, height: int = 400) -> bytes:
    """Grouped bars, one group per figure: measured (blue) beside published (grey), each group scaled to
    its larger value (the figures have different units); the measured/published ratio under each group."""
    c = Canvas(width, height)
    c.text(16, 12, title[: (width - 32) // 12], scale=2)
    if verdict_line:
        c.text(16, 36, verdict_line[: (width - 32) // 6], BAD if verdict_line.startswith("FAIL") else BLACK)
    lx = width - 230
    c.rect(lx, 52, lx + 12, 64, MEASURED)
    x = c.text(lx + 18, 55, "MEASURED")
    c.rect(x + 12, 52, x + 24, 64, PUBLISHED)
    c.text(x + 30, 55, "PUBLISHED")
    top, base = 90, height - 70
    c.rect(16, base, width - 16, base + 1, GREY)
    groups = list(comparison)
    slot = (width - 32) // max(1, len(groups))
    for i, row in enumerate(groups):
        gx = 16 + i * slot
        measured, published = row.get("measured"), row.get("published")
        peak = max(v for v in (measured, published, 1e-12) if v is not None)
        bar_w = max(8, min(48, slot // 3))
        for j, (value, color) in enumerate(((measured, MEASURED), (published, PUBLISHED))):
            bx = gx + slot // 2 - bar_w - 2 + j * (bar_w + 4)
            if value is None:
                c.text(bx + bar_w // 2 - 8, base - 12, "N/A", GREY)
                continue
            h = int((base - top - 16) * value / peak) if peak > 0 else 0
            c.rect(bx, base - h, bx + bar_w, base, color)
            label = _short(value)
            c.text(bx + bar_w // 2 - text_width(label) // 2, base - h - 11, label)
        name = str(row.get("label", row.get("figure", "")))
        unit = str(row.get("unit", ""))
        for k, line in enumerate((name, unit)):
            c.text(gx + slot // 2 - text_width(line) // 2, base + 8 + k * 11, line)
        ratio = row.get("ratio")
        if ratio is not None:
            good = ratio >= 1 if row.get("higher_is_better") else ratio <= 1
            line = f"X{ratio:.3f}"
            c.text(gx + slot // 2 - text_width(line) // 2, base + 32, line, BLACK if good else BAD)
    return c.png()
