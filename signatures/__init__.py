"""Typed DSPy signatures of the loop's steps (Router, Extraction, Evaluator, Synthesis, Planner, Rerank)."""
