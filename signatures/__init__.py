"""Typed DSPy signatures of the loop's steps; each docstring is the step's instruction."""
from ferret.signatures.answer import AgentAnswer, AnswerFromPassages
from ferret.signatures.confirm import ConfirmAnswer
from ferret.signatures.conversation import RewriteTurn, UpdateSummary
from ferret.signatures.evaluator import Evaluator
from ferret.signatures.extraction import Extraction
from ferret.signatures.judge import JudgeAnswer
from ferret.signatures.planner import Planner
from ferret.signatures.read import ReadPassages
from ferret.signatures.rerank import Rerank
from ferret.signatures.router import Router
from ferret.signatures.summary import SummarizeChunk
from ferret.signatures.synthesis import Synthesis

__all__ = ["AgentAnswer", "AnswerFromPassages", "ConfirmAnswer", "Evaluator", "Extraction", "JudgeAnswer", "Planner", "ReadPassages", "Rerank",
           "RewriteTurn", "Router", "SummarizeChunk", "Synthesis", "UpdateSummary"]
