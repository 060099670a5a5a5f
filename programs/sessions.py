"""Conversation sessions kept in SQLite beside the index (`sessions.db` in the index directory): each
turn's text, standalone question, scope, summary and result (answer, citations, rows), so that
`ferret chat --session ID` resumes after a restart. A session reads only its own turns."""
from __future__ import annotations

import json
import sqlite3
import time
import uuid
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, created REAL NOT NULL, program TEXT NOT NULL, mlflow_run_id TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS turns (
    session_id TEXT NOT NULL REFERENCES sessions(id), n INTEGER NOT NULL, created REAL NOT NULL,
    text TEXT NOT NULL, kind TEXT NOT NULL, question TEXT NOT NULL, state TEXT NOT NULL, result TEXT NOT NULL,
    PRIMARY KEY (session_id, n));
"""


class SessionStore:
    """The sessions of one index."""

    def __init__(self, index_dir: str | Path):
        self.path = Path(index_dir) / "sessions.db"
        self.conn = sqlite3.connect(self.path, check_same_thread=False)
        self.conn.executescript(SCHEMA)

    def create(self, program: str) -> str:
        session_id = uuid.uuid4().hex[:8]
        with self.conn:
            self.conn.execute("INSERT INTO sessions (id, created, program) VALUES (?, ?, ?)",
                              (session_id, time.time(), program))
        return session_id

    def check(self, session_id: str) -> None:
        """ValueError naming an unknown session, with the known ones."""
        if self.conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
            known = [row["id"] for row in self.sessions()][:10]
            raise ValueError(f"unknown session {session_id!r} in {self.path}; sessions: {', '.join(known) or '(none)'}")

    def set_run(self, session_id: str, run_id: str) -> None:
        with self.conn:
            self.conn.execute("UPDATE sessions SET mlflow_run_id = ? WHERE id = ?", (run_id, session_id))

    def run_of(self, session_id: str) -> str:
        row = self.conn.execute("SELECT mlflow_run_id FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return row[0] if row else ""

    def add_turn(self, session_id: str, turn: dict) -> None:
        """Store a turn: its number n, text, kind, question, the conversation state after it, and its result."""
        with self.conn:
            self.conn.execute("INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                              (session_id, turn["n"], time.time(), turn["text"], turn["kind"], turn["question"],
                               json.dumps(turn["state"], default=str), json.dumps(turn["result"], default=str)))

    def turns(self, session_id: str) -> list[dict]:
        """The session's turns in order: n, text, kind, question, state, result."""
        rows = self.conn.execute("SELECT n, text, kind, question, state, result FROM turns WHERE session_id = ? "
                                 "ORDER BY n", (session_id,))
        return [{"n": n, "text": text, "kind": kind, "question": question, "state": json.loads(state),
                 "result": json.loads(result)} for n, text, kind, question, state, result in rows]

    def sessions(self) -> list[dict]:
        """Every session, newest first: id, created, program, turns, and its first question."""
        rows = self.conn.execute(
            "SELECT s.id, s.created, s.program, COUNT(t.n), (SELECT text FROM turns WHERE session_id = s.id AND n = 1) "
            "FROM sessions s LEFT JOIN turns t ON t.session_id = s.id GROUP BY s.id ORDER BY s.created DESC")
        return [{"id": id_, "created": created, "program": program, "turns": turns, "first": first or ""}
                for id_, created, program, turns, first in rows]
