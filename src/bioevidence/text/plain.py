"""Plain text (a local ``.txt`` file, a PDF's extracted text) as paragraphs and as an :class:`Article`.

One reading serves the knowledge base (which searches and shows the paragraphs) and the literature
grounder (which checks quotes against them), so a sentence a knowledge base shows is a verbatim slice
of a passage the gate reads. Paragraphs are the blocks between blank lines, whitespace collapsed;
passage ids are ``p1``, ``p2``, … in reading order.
"""

from __future__ import annotations

from .jats import Article, Passage
from .jats_inline import match_form
from .tokens import plain_markers

__all__ = ["paragraphs", "plain_article"]


def paragraphs(text: str) -> list[str]:
    """The non-empty blocks of ``text`` between blank lines, whitespace collapsed."""
    out: list[str] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        block = " ".join(block.split())
        if block:
            out.append(block)
    return out


def plain_article(text: str, *, title: str = "") -> Article:
    """``text`` as an article of body paragraphs (``p1``…), author-year and numbered citation
    markers recognised as in JATS passages."""
    passages = []
    for n, para in enumerate(paragraphs(text), 1):
        markers = tuple(plain_markers(para))
        passages.append(Passage(f"p{n}", "paragraph", "Body", "", para, match_form(para, markers, ()), "body", "",
                                markers))
    return Article(title, tuple(passages))
