"""A PDF written the way a typesetter writes one: text lines in a standard font, one page per block.

For the knowledge base's PDF tier (tests/librarian/test_kb_pdf.py): the text put in comes from a
real pinned paper, the file is a real PDF 1.4 (cross-reference table, Helvetica with WinAnsi
encoding) that pypdf and any viewer read, and words may be broken across lines with a hyphen as
justified text is. :func:`scan_pdf` is a page with no text layer (a drawn box, as a scan is an image).
"""

from __future__ import annotations

import textwrap


def _escape(line: str) -> bytes:
    return line.encode("cp1252").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def _pdf(streams: list[bytes]) -> bytes:
    """A PDF whose pages draw the given content streams (Helvetica as /F1)."""
    n_pages = len(streams)
    page_ids = [4 + 2 * i for i in range(n_pages)]
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % p for p in page_ids) + b"] /Count %d >>" % n_pages,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for i, stream in enumerate(streams):
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                       b"/Contents %d 0 R >>" % (page_ids[i] + 1))
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def text_pdf(pages: list[str], *, width: int = 88, hyphenate: dict[str, int] | None = None) -> bytes:
    """A PDF of ``pages`` (one string each), wrapped at ``width`` characters a line. ``hyphenate``
    maps a word to the position where it is broken across a line end ("resistance": 5 puts
    "resis-" at the end of a line and "tance" at the start of the next)."""
    streams = []
    for page in pages:
        lines: list[str] = []
        for paragraph in page.split("\n\n"):
            lines.extend(textwrap.wrap(paragraph, width) or [""])
        for word, cut in (hyphenate or {}).items():
            for n, line in enumerate(lines[:-1]):
                if f" {word} " in f" {line} ":
                    head, _, tail = f" {line} ".partition(f" {word} ")
                    lines[n] = f"{head.strip()} {word[:cut]}-".strip()
                    lines.insert(n + 1, f"{word[cut:]} {tail.strip()}".strip())
                    break
        ops = [b"BT /F1 10 Tf 12 TL 56 740 Td"]
        ops += [b"(" + _escape(line) + b") Tj T*" for line in lines]
        ops.append(b"ET")
        streams.append(b"\n".join(ops))
    return _pdf(streams)


def scan_pdf() -> bytes:
    """One page with a filled rectangle and no text, as a scanned page looks to a text extractor."""
    return _pdf([b"0.5 g 56 56 500 680 re f"])
