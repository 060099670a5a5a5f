"""Typed DSPy signatures of the loop's steps; each docstring is the step's instruction."""
from signatures.answer import AgentAnswer, AnswerFromPassages
from signatures.conversation import RewriteTurn, UpdateSummary
from signatures.evaluator import Evaluator
from signatures.extraction import Extraction
from signatures.judge import JudgeAnswer
from signatures.planner import Planner
from signatures.read import ReadPassages
from signatures.rerank import Rerank
from signatures.router import Router
from signatures.synthesis import Synthesis

__all__ = ["AgentAnswer", "AnswerFromPassages", "Evaluator", "Extraction", "JudgeAnswer", "Planner", "ReadPassages", "Rerank",
           "RewriteTurn", "Router", "Synthesis", "UpdateSummary"]
