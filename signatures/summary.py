"""SummarizeChunk: an LM's summary of one chunk of a long document (`ferret ingest --summaries LM`)."""
import dspy

from ferret.signatures.types import SummarySentence


class SummarizeChunk(dspy.Signature):
    """Summarize this part of a long document for a reader deciding whether to read it: what it covers and
    its key facts and figures, in at most five sentences of your own words, using only the numbered passages. Each sentence
    lists the [numbers] of the passages it comes from."""

    title: str = dspy.InputField(desc="the sections this part of the document holds")
    passages: list[str] = dspy.InputField(desc="numbered from [1]: its most telling sentences and table rows")
    sentences: list[SummarySentence] = dspy.OutputField()
