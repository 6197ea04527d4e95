"""Text analysis for lexical search: one tokenizer shared by indexing, querying and the judge.

Lower-case word tokens (letters/digits, hyphen-joined parts split), English stop words removed,
Snowball (Porter2) stems via PyStemmer. A stemmer per thread: PyStemmer objects are not
documented as thread-safe, and the study found a shared segmenter race in the reference
project, so nothing here is shared mutable state.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

__all__ = ["STOPWORDS", "analyze", "raw_tokens", "stem"]

_TOKEN = re.compile(r"[0-9a-z]+(?:\.[0-9]+)?")
STOPWORDS = frozenset(
    [
        "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as",
        "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can",
        "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further",
        "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his",
        "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my",
        "myself", "no", "nor", "not", "of", "off", "on", "once", "only", "or", "other", "our", "ours",
        "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that",
        "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those",
        "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when",
        "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
        "yourself", "yourselves", "also", "may", "might", "must", "shall", "via", "vs", "whether", "within",
        "without", "among", "upon", "per",
    ]
)
_local = threading.local()


def _stemmer() -> Any:
    st = getattr(_local, "stemmer", None)
    if st is None:
        import Stemmer  # PyStemmer: C Snowball; imported lazily (heavy-ish, and optional for the CLI help)

        st = Stemmer.Stemmer("english")
        _local.stemmer = st
    return st


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Snowball English stem of one lower-case word (cached; the cache is thread-safe)."""
    return str(_stemmer().stemWord(word))


def raw_tokens(text: str) -> list[str]:
    """Lower-case word tokens, stop words kept (for phrase checks and wildcard prefixes)."""
    return _TOKEN.findall(text.lower())


def analyze(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Index/query terms of ``text``: tokens minus stop words, stemmed."""
    return [stem(t) for t in _TOKEN.findall(text.lower()) if keep_stopwords or t not in STOPWORDS]
