"""The layered graph: document → section → segment (paragraph or table) → sentence or table row.

Hierarchy and same-section adjacency are already columns of the store (section parent, segment
section and order, annotation segment), so they are read, not duplicated as edge rows; only
cross-references ("see Note 19", "Item 7", 'the section entitled "..."') are stored as edges,
resolved at ingest to the target section. Node ids: `doc:<doc_id>`, `sec:<doc_id>:<section_id>`,
`seg:<segment_id>`, `sent:<segment_id>:<i>`, `row:<annotation_id>`.
"""
from __future__ import annotations

import difflib
import re

from ferret.corpus.records import ParsedDocument, Section
from ferret.corpus.store import Store
from ferret.corpus.words import sentences

_NOTE_REF = re.compile(r"\bNotes?\s+(\d{1,2}[A-Z]?)\b")
_ITEM_REF = re.compile(r"\bItem\s+(\d{1,2}[A-C]?)\b")
_TITLED_REF = re.compile(
    r"(?:section|heading|caption|note)s?\s+(?:entitled|titled|captioned|headed)\s+[\"“']([^\"”']{3,120})[\"”']", re.I)
_TITLE_LEN = 80


def find_cross_references(doc: ParsedDocument) -> list[tuple[int, str, str]]:
    """(segment index, target section id, referring text) for each resolvable reference."""
    notes, items = _numbered_titles(doc.sections)
    found = []
    for index, segment in enumerate(doc.segments):
        targets: dict[str, str] = {}
        for match in _NOTE_REF.finditer(segment.text):
            if match.group(1).upper() in notes:
                targets.setdefault(notes[match.group(1).upper()], match.group(0))
        for match in _ITEM_REF.finditer(segment.text):
            if match.group(1).upper() in items:
                targets.setdefault(items[match.group(1).upper()], match.group(0))
        for match in _TITLED_REF.finditer(segment.text):
            section = _section_titled(doc.sections, match.group(1))
            if section is not None:
                targets.setdefault(section, match.group(0))
        found.extend((index, target, text) for target, text in targets.items() if target != segment.section_id)
    return found


def _numbered_titles(sections: list[Section]) -> tuple[dict[str, str], dict[str, str]]:
    """Section ids by note number ("Note 19 ..." or "19. ..." under a Notes section) and by item number."""
    by_id = {section.id: section for section in sections}
    notes: dict[str, str] = {}
    items: dict[str, str] = {}
    for section in sections:
        title = section.title.strip()
        item = re.match(r"item\s+(\d{1,2}[a-c]?)\b", title, re.I)
        if item:
            items.setdefault(item.group(1).upper(), section.id)
        note = re.match(r"note\s+(\d{1,2}[a-z]?)\b", title, re.I)
        numbered = re.match(r"(\d{1,2})[.:)]?\s+[A-Z]", title)
        parent = by_id.get(section.parent_id or "")
        if note:
            notes.setdefault(note.group(1).upper(), section.id)
        elif numbered and parent is not None and "note" in parent.title.lower():
            notes.setdefault(numbered.group(1), section.id)
    return notes, items


def _section_titled(sections: list[Section], wanted: str) -> str | None:
    titles = {section.title.lower(): section.id for section in sections}
    match = difflib.get_close_matches(wanted.lower(), list(titles), n=1, cutoff=0.8)
    return titles[match[0]] if match else None


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _TITLE_LEN else text[: _TITLE_LEN - 1] + "…"


def neighbors(store: Store, node_id: str) -> list[dict]:
    """Adjacent and linked nodes of `node_id`, each with node_id, kind, relation, title, doc_id, page."""
    kind, _, rest = node_id.partition(":")
    handler = {"doc": _document_neighbors, "sec": _section_neighbors, "seg": _segment_neighbors,
               "sent": _sentence_neighbors, "row": _row_neighbors}.get(kind)
    if handler is None or not rest:
        raise ValueError(f"unknown node id {node_id!r}: expected doc:<doc_id>, sec:<doc_id>:<section>, "
                         "seg:<id>, sent:<segment>:<i> or row:<id>")
    return handler(store, rest)


def _node(node_id: str, kind: str, relation: str, title: str, doc_id: str, page: int | None) -> dict:
    return {"node_id": node_id, "kind": kind, "relation": relation, "title": _short(title),
            "doc_id": doc_id, "page": page}


def _section_node(row, relation: str) -> dict:
    return _node(f"sec:{row['doc_id']}:{row['id']}", "section", relation, row["title"], row["doc_id"],
                 row["page_start"])


def _segment_node(row, relation: str) -> dict:
    return _node(f"seg:{row['id']}", row["kind"], relation, row["text"], row["doc_id"], row["page"])


def _document_neighbors(store: Store, doc_id: str) -> list[dict]:
    if store.conn.execute("SELECT 1 FROM documents WHERE doc_id = ?", (doc_id,)).fetchone() is None:
        raise ValueError(f"unknown document {doc_id!r}")
    rows = store.conn.execute("SELECT * FROM sections WHERE doc_id = ? AND parent_id IS NULL ORDER BY ord",
                              (doc_id,))
    return [_section_node(row, "child") for row in rows]


def _section_neighbors(store: Store, rest: str) -> list[dict]:
    doc_id, _, section_id = rest.rpartition(":")
    c = store.conn
    section = _one(store, "SELECT * FROM sections WHERE doc_id = ? AND id = ?", (doc_id, section_id),
                   f"section sec:{rest}")
    out = []
    if section["parent_id"]:
        parent = c.execute("SELECT * FROM sections WHERE doc_id = ? AND id = ?",
                           (doc_id, section["parent_id"])).fetchone()
        out.append(_section_node(parent, "parent"))
    else:
        title = c.execute("SELECT title FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()[0]
        out.append(_node(f"doc:{doc_id}", "document", "parent", title, doc_id, None))
    for relation, op, order in (("previous", "<", "DESC"), ("next", ">", "ASC")):
        row = c.execute(f"SELECT * FROM sections WHERE doc_id = ? AND parent_id IS ? AND ord {op} ? "
                        f"ORDER BY ord {order} LIMIT 1", (doc_id, section["parent_id"], section["ord"])).fetchone()
        if row is not None:
            out.append(_section_node(row, relation))
    out += [_section_node(row, "child") for row in
            c.execute("SELECT * FROM sections WHERE doc_id = ? AND parent_id = ? ORDER BY ord", (doc_id, section_id))]
    out += [_segment_node(row, "contains") for row in
            c.execute("SELECT * FROM segments WHERE doc_id = ? AND section_id = ? ORDER BY ord", (doc_id, section_id))]
    out += [_segment_node(row, "referenced_by") for row in c.execute(
        "SELECT s.* FROM edges e JOIN segments s ON s.id = CAST(substr(e.src, 5) AS INTEGER) AND e.src = 'seg:' || s.id "
        "WHERE e.dst = ? ORDER BY s.id",
        (f"sec:{rest}",))]
    return out


def _segment_neighbors(store: Store, rest: str) -> list[dict]:
    c = store.conn
    segment = _one(store, "SELECT * FROM segments WHERE id = ?", (_int(rest, "seg"),), f"segment seg:{rest}")
    doc_id = segment["doc_id"]
    out = []
    parent = c.execute("SELECT * FROM sections WHERE doc_id = ? AND id = ?", (doc_id, segment["section_id"])).fetchone()
    if parent is not None:
        out.append(_section_node(parent, "parent"))
    for relation, op, order in (("previous", "<", "DESC"), ("next", ">", "ASC")):
        row = c.execute(f"SELECT * FROM segments WHERE doc_id = ? AND section_id IS ? AND ord {op} ? "
                        f"ORDER BY ord {order} LIMIT 1", (doc_id, segment["section_id"], segment["ord"])).fetchone()
        if row is not None:
            out.append(_segment_node(row, relation))
    if segment["kind"] == "table":
        out += [_node(f"row:{row['id']}", "row", "child", row["label"], doc_id, row["page"]) for row in c.execute(
            "SELECT a.id, a.page, l.text AS label FROM annotations a JOIN labels l ON l.id = a.label_id "
            "WHERE a.segment_id = ? AND a.kind = 'row' ORDER BY a.id", (segment["id"],))]
    else:
        out += [_node(f"sent:{segment['id']}:{i}", "sentence", "child", text, doc_id, segment["page"])
                for i, text in enumerate(sentences(" ".join(segment["text"].split())))]
    out += [_section_node(row, "references") for row in c.execute(
        "SELECT s.* FROM edges e JOIN sections s ON s.doc_id = e.doc_id AND e.dst = 'sec:' || s.doc_id || ':' || s.id "
        "WHERE e.src = ? ORDER BY s.ord", (f"seg:{segment['id']}",))]
    return out


def _sentence_neighbors(store: Store, rest: str) -> list[dict]:
    segment_part, _, index_part = rest.partition(":")
    segment = store.conn.execute("SELECT * FROM segments WHERE id = ?", (_int(segment_part, "sent"),)).fetchone()
    index = _int(index_part, "sent")
    parts = sentences(" ".join(segment["text"].split())) if segment is not None else []
    if not 0 <= index < len(parts):
        raise ValueError(f"unknown sentence sent:{rest}")
    out = [_segment_node(segment, "parent")]
    for relation, other in (("previous", index - 1), ("next", index + 1)):
        if 0 <= other < len(parts):
            out.append(_node(f"sent:{segment['id']}:{other}", "sentence", relation, parts[other],
                             segment["doc_id"], segment["page"]))
    return out


def _row_neighbors(store: Store, rest: str) -> list[dict]:
    c = store.conn
    row = _one(store, "SELECT * FROM annotations WHERE id = ?", (_int(rest, "row"),), f"row row:{rest}")
    out = []
    segment = c.execute("SELECT * FROM segments WHERE id = ?", (row["segment_id"],)).fetchone()
    if segment is not None:
        out.append(_segment_node(segment, "parent"))
    for relation, op, order in (("previous", "<", "DESC"), ("next", ">", "ASC")):
        other = c.execute(
            f"SELECT a.id, a.page, l.text AS label FROM annotations a JOIN labels l ON l.id = a.label_id "
            f"WHERE a.segment_id IS ? AND a.kind = 'row' AND a.id {op} ? ORDER BY a.id {order} LIMIT 1",
            (row["segment_id"], row["id"])).fetchone()
        if other is not None:
            out.append(_node(f"row:{other['id']}", "row", relation, other["label"], row["doc_id"], other["page"]))
    return out


def _one(store: Store, sql: str, params: tuple, what: str):
    row = store.conn.execute(sql, params).fetchone()
    if row is None:
        raise ValueError(f"unknown {what}")
    return row


def _int(text: str, kind: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"bad {kind} node id {kind}:{text!r}: expected a number") from None
