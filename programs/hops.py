"""Multi-hop search in code, with no LM: the question's passages, then the passages of what they name.

A question that one search cannot answer names a thing through another ("the film that was shot in
Leland, North Carolina in 1986"): its first search finds the passage about what it names (Leland), that
passage names the bridge ("Maximum Overdrive"), and the answer is in the passage about the bridge. So:

1. first hop: the question's hybrid search;
2. bridges: the names (capitalised phrases, quoted titles) printed in the passages of the first hop's
   top BRIDGE_SOURCES documents, those in a sentence sharing more of the question's words first (a
   sentence of a page the question names by its title counts the title's words too: "He played for the
   Philadelphia Eagles" on the page "Dick Humbert" is about him; an initial's period before a name ends
   no sentence: "singer-songwriter M. Ward."), names of several words before single words, at most
   MAX_BRIDGES. A name the question already says is no bridge, nor one that shares a word with its own
   passage's document title (the passage's subject again, under its full name: "Nathan John Astle" on
   the page "Nathan Astle"), nor a date or number;
3. second hops: each bridge with the question's words its passage does not hold (what is left to find:
   "Maximum Overdrive directed"), searched the same way;
4. parts: a question that joins two or more names by "and" or "or" (a comparison: "Which band
   was formed first, The Exies or Circus Diablo?") searches each name on its own too;
5. fusion: the first hop's top KEEP_FIRST passages (at most half of those asked for) stay on top (the
   first hop is almost always right:
   some gold passage is in the top 5 of 0.99 of HotpotQA's questions); the rest are ranked by weighted
   reciprocal rank (k = RRF_K) over every hop, a part's or bridge's list weighing less the later it
   comes (parts first, then bridges; BRIDGE_DECAY), LINKED times more when its top results include a document titled by its name,
   and a passage of the document titled by the name LINKED times more again (an entity link: the page
   about the bridge).

The constants were chosen on HotpotQA's 100 questions with `ferret eval --retrieval` (recall_all@5 0.64
for hybrid search, 0.86 with hops; within 0.03 for any of them halved or doubled; with the title's words
of a page the question names and sentences not ended by an initial, 0.62 and 0.90). On a corpus whose
documents are not titled by what they are about (filings, reports) no bridge links, and the first hop's
passages keep their order in front.

It reads English questions (their names, joins and relative clauses), so it lives with the programs, on
top of the corpus's public search (`Corpus.search_text`, `corpus.snippets.snippet`, `corpus.words`).
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from ferret.corpus.snippets import snippet
from ferret.corpus.tools import HYBRID
from ferret.corpus.words import STOPWORDS, sentences, stems, words

BRIDGE_SOURCES = 3  # first-hop documents whose passages name the bridges
MAX_BRIDGES = 6
FIRST_DEPTH = 30  # passages of the first hop fused (at least)
SECOND_DEPTH = 10  # passages of each second hop
KEEP_FIRST = 3  # first-hop passages kept on top
RRF_K = 5
BRIDGE_DECAY = 0.3
LINKED = 2.0
MAX_NAME_WORDS = 8
PASSAGE_CHARS = 2000  # of each passage, read for names (a passage's whole text, as a rule)

_CONNECTORS = r"(?:of|the|de|la|von|van|for|du|del|da|di|le)"
# a capitalised word, an initial or short abbreviation ("E.", "St."), dotted initials ("U.S."), a number;
# a sentence's closing period is no part of a name
_NAME_WORD = r"(?:[A-Z](?:\.[A-Z])+\.?|[A-Z][a-z]?\.|[A-Z][\w'’&-]*|\d[\w'’-]*)"
_NAME = re.compile(rf"[\"“]([^\"”]{{2,80}})[\"”]|({_NAME_WORD}(?:(?:\s+{_CONNECTORS})*\s+{_NAME_WORD})*)")
_PARENTHESIS = re.compile(r"\s*\(.*?\)")
_JOIN = re.compile(r",?\s+(?:and|or)\s+(?:the\s+)?", re.IGNORECASE)
_NUMBER = re.compile(r"\d{2}")
_NESTED = re.compile(r"\b(?:the|a|an)\s+(?:[\w'’-]+\s+){0,3}?(?:that|which|who|whom|whose|where)\s+\w+", re.IGNORECASE)


@dataclass
class Hops:
    """A multi-hop search: the fused passages, best first (each with "via": "" for the first hop, else the
    bridge or part it was found through), and the bridges and parts searched, in order."""

    hits: list[dict]
    bridges: list[str] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)


def names(text: str) -> list[str]:
    """The names printed in a text, in order, each once: quoted phrases and runs of capitalised words
    (joined by "of", "the", "de", ...), without a leading function word ("The Exies" → "Exies")."""
    return list(dict.fromkeys(name for name, _ in _named_spans(text)))


def _named_spans(text: str) -> list[tuple[str, re.Match]]:
    found = []
    for match in _NAME.finditer(text):
        name_words = (match.group(1) or match.group(2) or "").strip(" .,;:'’").split()
        while name_words and name_words[0].lower() in STOPWORDS:
            name_words = name_words[1:]
        name = " ".join(name_words[:MAX_NAME_WORDS])
        if stems(name, months=False) and not (len(name_words) == 1 and len(name) < 3):
            found.append((name, match))
    return found


def remaining_terms(question: str, passage: str) -> list[str]:
    """The question's content words that the passage does not hold: what a next hop still has to find."""
    held = stems(passage, numbers=True)
    return list(dict.fromkeys(word for word in words(question) if stems(word, numbers=True) - held))


def bridges(question: str, hits: list[dict]) -> list[tuple[str, dict]]:
    """(name, the passage that names it) for the names the first hop's top passages print that may lead
    to a next hop, best first (see the module's rule 2)."""
    asked = stems(question, months=False)
    scored, sources = [], []
    for hit in hits:
        if hit["doc_id"] not in sources:
            sources.append(hit["doc_id"])
        if len(sources) > BRIDGE_SOURCES:
            break
        subject = stems(hit.get("title") or "", months=False)
        named = bool(hit.get("title")) and title_name(hit["title"]).lower() in question.lower()  # the page the question names
        for sentence in sentences(hit["text"]):
            shared = len(asked & (stems(sentence, months=False) | (subject if named else set())))  # "He played for ..." on "Dick Humbert"
            for name in names(sentence):
                held = stems(name, months=False)
                if held <= asked or held & subject:
                    continue
                scored.append((-(shared + (len(name.split()) > 1)), len(scored), name, hit))
    best: dict[str, tuple[str, dict]] = {}
    for *_, name, hit in sorted(scored, key=lambda item: item[:2]):
        best.setdefault(name.lower(), (name, hit))
    return list(best.values())[:MAX_BRIDGES]


_OFFER = re.compile(r"\W*\s+or\s+(?:[a-z]+\s+){0,4}", re.IGNORECASE)  # ", or the birth of "


def parts(question: str) -> list[str]:
    """The names a comparison sets side by side: two or more names of the question joined by "and" or
    "or" ("Are A and B both ...", "Which is older, A or B?"; not "Leland, North Carolina"), none a period or an
    amount (a name with a number of two digits or more: "FY2023 and FY2022" is one search's table)."""
    spans = [(name, match) for name, match in _named_spans(question) if not _NUMBER.search(name)]
    joined: list[str] = []
    for (left, before), (right, after) in zip(spans, spans[1:]):
        if _JOIN.fullmatch(question[before.end():after.start()]):
            joined += [name for name in (left, right) if name not in joined]
    return joined


def offered(question: str) -> list[str]:
    """The two names a question offers to choose between, "or" joining them ("Which is older, A or B?",
    "Which came first, the forming of A or the birth of B?"), or []."""
    spans = [(name, match) for name, match in _named_spans(question) if not _NUMBER.search(name)]
    for (left, before), (right, after) in zip(spans, spans[1:]):
        if _OFFER.fullmatch(question[before.end():after.start()]):
            return [left, right]
    return []


def title_name(title: str) -> str:
    """A document's title without its parenthesis: "Cartoon Network" of "Cartoon Network (TV)"."""
    return _PARENTHESIS.sub("", title or "").strip()


def linked(name: str, title: str) -> bool:
    """The document's title (without a parenthesis: "Cartoon Network" of "Cartoon Network (TV)") is the
    name, or one holds the other."""
    title, name = title_name(title).lower(), name.lower()
    return title == name or (len(title) > 3 and (title in name or name in title))


def hop_search(corpus, question: str, top_k: int, bucket: str | None = None, doc_id: str | None = None,
               filters: dict | str | None = None, context_chars: int = PASSAGE_CHARS,
               lexical_weight: float = HYBRID) -> Hops:
    """The question's passages and those of the bridges and parts they lead to, fused (module rules),
    every search one of `corpus.tools.Corpus.search` at `lexical_weight` (hybrid by default) in the same
    scope (bucket, document, filters); each passage's text is `context_chars` around the words that found
    it (its bridge's, and the question's)."""
    def search(query: str, k: int) -> list[dict]:
        return corpus.search(query, lexical_weight, bucket=bucket, filters=filters, top_k=k,
                             context_chars=PASSAGE_CHARS, doc_id=doc_id)

    first = search(question, max(top_k, FIRST_DEPTH))
    lists: list[tuple[float, str, list[dict]]] = [(1.0, "", first)]
    found = [(name, hit["node_id"], remaining_terms(question, hit["text"])) for name, hit in bridges(question, first)]
    named = parts(question)  # named by the question itself: before the names its passages print
    for n, (name, source, rest) in enumerate([(part, None, []) for part in named] + found):
        hits = [hit for hit in search(" ".join([name, *rest]), SECOND_DEPTH) if hit["node_id"] != source]
        weight = (LINKED if any(linked(name, hit.get("title", "")) for hit in hits[:3]) else 1.0) / (1 + n * BRIDGE_DECAY)
        lists.append((weight, name, hits))
    fused: dict[str, float] = defaultdict(float)
    best: dict[str, tuple[float, dict]] = {}  # each passage as found by the hop that counted most for it
    for weight, via, hits in lists:
        for rank, hit in enumerate(hits):
            score = weight * (LINKED if via and linked(via, hit.get("title", "")) else 1.0) / (RRF_K + rank + 1)
            fused[hit["node_id"]] += score
            if score > best.get(hit["node_id"], (0.0,))[0]:
                best[hit["node_id"]] = (score, {**hit, "via": via})
    kept = [hit["node_id"] for hit in first[:min(KEEP_FIRST, (top_k + 1) // 2)]]  # the other half for the hops
    best.update((hit["node_id"], (0.0, {**hit, "via": ""})) for hit in first[:len(kept)])
    ranked = kept + sorted((node for node in fused if node not in kept), key=lambda node: -fused[node])
    hits = [{**hit, "text": snippet(hit["text"], f"{hit['via']} {question}", context_chars,
                                    hit.get("kind") == "table")}
            for hit in (best[node][1] for node in ranked[:top_k])]
    return Hops(hits, [name for name, *_ in found], named)


def hop_needed(question: str) -> str:
    """Why the question needs more than one hop, "" when nothing says so: it compares named things (its
    `parts`), or it names a thing through another, by a relative clause ("the film that was shot in...",
    "a German musician whose godfather...")."""
    if named := parts(question):
        return "it compares " + ", ".join(named)
    nested = _NESTED.search(question)
    return f"it names a thing through another: {nested.group(0)!r}" if nested else ""
