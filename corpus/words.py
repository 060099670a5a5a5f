"""Words as the code that reads questions and pages compares them: lowercased, function words aside, and
cut to five letters (a crude stem), shared by the multi-hop search, the long-text route's choice of
chunks, the gap and grounding."""
from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9][\w'’-]*")
MONTHS = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"}
STOPWORDS = frozenset("""a an the of in on at to for by with from and or but is are was were be been being do does did
has have had what which who whom whose when where why how that this these those it its as than then there their they
he she his her him them not no yes both either neither also same other another one two first second more most less
least many much into onto over under about after before between during through while since until upon can could will
would should may might shall must if so such only own very just any all each every some few""".split())


def words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def stems(text: str) -> set[str]:
    """Content words, cut to five letters (a crude stem: "translated" and "translation" meet)."""
    return {word[:5] for word in words(text) if word not in STOPWORDS and len(word) > 2
            and word not in MONTHS and not word.isdigit()}
