"""Arithmetic an answering step asks for, computed in code.

The embedded 0.5B model copies printed numbers well and computes with them badly (held-out TAT-QA, one
call with the gold table in its context: 1 of 12 right, "1.0" for 3.61). So an answering step writes
the operation instead of its result: an expression over numbers as printed ("(1,250 - 1,100) / 1,100 *
100", "$4.2", "12.5%") and over numbered findings ("([1] - [2]) / [2] * 100"). It is parsed by Python's
`ast` after each number and reference is replaced by a name, and only names, + - * /, unary signs and
parentheses are accepted: nothing is ever `eval`ed. The result is exact, and its operands are what the
answer must cite.
"""
from __future__ import annotations

import ast
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass

MAX_CHARS = 300
# An operand: a reference "[n]", or a printed number (currency, thousands separators, decimals, percent).
_OPERAND = re.compile(r"\[(?P<reference>\d+)\]|(?P<number>[$€£]?\s?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)%?)")
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_SIGNS = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_SYMBOLS = str.maketrans({"×": "*", "÷": "/", "−": "-", "–": "-"})
# Words of a question that asks for a computed number. On TAT-QA dev they cue 563 of the 718
# arithmetic questions and 45 of the 950 others; on HotpotQA 2 of 100.
_ASKS = re.compile(r"\b(?:change[sd]?|differen(?:ce|t)|differ|growth|grow|grew|ratio|proportion|average|mean|sum|"
                   r"combined|times|how much (?:more|less|higher|lower))\b", re.IGNORECASE)
# Words that ask for one as often as for a printed value ("What was the total revenue?", "Why did X
# increase?"): on TAT-QA dev, without an _ASKS word, 146 arithmetic questions and 150 others.
_MAY_ASK = re.compile(r"\b(?:increase[sd]?|decrease[sd]?|percentage|percent|total)\b", re.IGNORECASE)
# A question that ends "...in total?" asks for a sum (the structured route's cue, whatever the Router
# read): the embedded 0.5B Router read "How much was spent on batteries in 2023 in total?" as a lookup,
# and the loop answered from an annual report's inventory note. Of the TAT-QA, FinanceBench and HotpotQA
# questions, 4 of TAT-QA's end so (none of the dev questions the README's table scores).
SUM_ASKED = re.compile(r"\b(?:in total|altogether|in all|combined)\W*$", re.IGNORECASE)
# The operations a question's wording names, each by its words.
_OPERATIONS = {
    "percentage": re.compile(r"\bpercent(?:age)?\b|%", re.IGNORECASE),
    "change": re.compile(r"\b(?:change[sd]?|differen(?:ce|t)|differ|increase[sd]?|decrease[sd]?|growth|grow|grew|"
                         r"how much (?:more|less|higher|lower))\b", re.IGNORECASE),
    "average": re.compile(r"\b(?:average|mean)\b", re.IGNORECASE),
    "ratio": re.compile(r"\b(?:ratio|proportion|times)\b", re.IGNORECASE),
    "sum": re.compile(rf"\bsum\b|{SUM_ASKED.pattern}", re.IGNORECASE),  # not "total revenue"
}
_METRIC_AVERAGE = re.compile(r"\bweighted[- ]average\b", re.IGNORECASE)  # a metric's name ("weighted-average shares")


_WRITTEN = re.compile(r"[-+*/×÷−–=()\d.,$€£%\s]+")  # an answer of numbers and operators only
SHARE = re.compile(r"(?:\bpercent(?:age)?|%)\)?\s+of\b|\bas an? (?:percent(?:age)?|%|share)\b", re.IGNORECASE)


class ExpressionError(ValueError):
    """An expression that is not plain arithmetic over numbers and [references], or cannot be computed."""


@dataclass(frozen=True)
class Operand:
    """One operand as written: a printed number, or a reference to the `reference`-th value (from 1)."""

    text: str
    value: float
    reference: int | None = None


@dataclass(frozen=True)
class Computation:
    expression: str
    value: float
    operands: tuple[Operand, ...]
    structural: frozenset[int] = frozenset()  # the operands the calculation's form writes (`_structural`)

    @property
    def literals(self) -> list[Operand]:
        """The printed numbers it computes with: not an average's count or a percentage's 100."""
        return [operand for at, operand in enumerate(self.operands) if operand.reference is None and at not in self.structural]

    @property
    def references(self) -> list[int]:
        return list(dict.fromkeys(o.reference for o in self.operands if o.reference is not None))


def asks_calculation(question: str) -> bool:
    """True when the question's wording asks for a number computed from others (a 0.5B model writes
    a calculation for "In which year was X largest?" too, so the wording decides whether it is used)."""
    return bool(_ASKS.search(question))


def may_ask_calculation(question: str) -> bool:
    """True when the wording may ask for a computed number or for a printed one ("total", "increase"):
    a calculation is then used only when the answer is not printed."""
    return bool(_MAY_ASK.search(question))


def operations(question: str) -> frozenset[str]:
    """The operations the question's wording names ("percentage" and "change" for "What is the
    percentage change in X?"; none for a lookup). The share whose change a question asks ("the change in
    the percentage of sales represented by X") is the metric that changes, not a percentage to compute;
    a weighted average ("weighted-average shares outstanding", "exchange rate") is a metric's name, as
    printed, not an average to compute."""
    question = _METRIC_AVERAGE.sub(" ", question)
    named = frozenset(name for name, words in _OPERATIONS.items() if words.search(question))
    return operations(SHARE.sub(" ", question)) if "change" in named and SHARE.search(question) else named


def names_operation(question: str, text: str) -> bool:
    """True when `text` names an operation the question names, or the question names none but a lookup's
    ("Change in revenue 5%" for "What was the change in revenue?"); "percentage" alone is a lookup's unit."""
    asked = operations(question) - {"percentage"}
    return not asked or any(_OPERATIONS[name].search(text) or name == "ratio" and SHARE.search(text) for name in asked)


def percentage_made(expression: str) -> float | None:
    """The value of a calculation that divides and multiplies the ratio by 100 ("(2,532 - 98) / 98 * 100"): a
    percentage, however large; None for any other expression."""
    try:
        computed = compute(expression)
    except ExpressionError:
        return None
    made = "/" in expression and any(computed.operands[at].value == 100 for at in computed.structural)
    return computed.value if made else None


def is_calculation(expression: str) -> bool:
    """True when the text applies an operator (a lone number or reference is a value, not a calculation)."""
    return bool(re.search(r"[-+*/×÷−–]", _OPERAND.sub("x", expression)))


def written_expression(answer: str) -> str:
    """The arithmetic an answer writes instead of a value ("1.949 + 1.987 + 1.747", "7,071 + 7,001 + 5,627 =
    21,709", "63 - 57 / 57 * 100 = 100"): the expression before any "=", "" when the answer is not wholly
    numbers and operators, or applies no operator but a dash ("73260 - 57768" states two values, as a range
    or a pair does; a lone number is a value)."""
    text = answer.strip().rstrip(".")
    if not _WRITTEN.fullmatch(text) or not re.search(r"[+*/×÷=]", _OPERAND.sub("x", text)):
        return ""
    expression = text.split("=")[0].strip()
    return expression if is_calculation(expression) else ""


def compute(expression: str, references: Sequence[float | None] = ()) -> Computation:
    """The value of `expression`; `[n]` stands for `references[n - 1]`. Raises ExpressionError for any
    other syntax, an unknown or non-numeric reference, or a division by zero."""
    text = expression.strip().translate(_SYMBOLS)
    if not text or len(text) > MAX_CHARS:
        raise ExpressionError(f"expression must be 1 to {MAX_CHARS} characters")
    operands: list[Operand] = []

    def name(match: re.Match) -> str:
        if match["reference"]:
            number = int(match["reference"])
            value = references[number - 1] if 1 <= number <= len(references) else None
            if value is None:
                raise ExpressionError(f"[{number}] is not a numbered value")
            operands.append(Operand(match[0], float(value), number))
        else:
            operands.append(Operand(match[0].strip(), float(re.sub(r"[^\d.]", "", match[0]))))
        return f" v{len(operands) - 1} "

    named = _OPERAND.sub(name, text).strip()
    try:
        tree = ast.parse(named, mode="eval")
    except SyntaxError:
        raise ExpressionError(f"not an arithmetic expression: {expression!r}") from None
    values = [operand.value for operand in operands]
    return Computation(expression.strip(), _evaluate(tree.body, values, expression), tuple(operands),
                       _structural(tree.body, values))


def _structural(node: ast.AST, values: list[float]) -> frozenset[int]:
    """The operands (by position) that the calculation's form writes, not a page: the count an average divides
    its sum by ("(197 + 101 + 206) / 3"), and the 100 that multiplies a ratio into a percentage ("a / b * 100");
    not a divisor of 100, which may be a page's ("5 / 100 * 100": revenue of 100)."""
    found = set()
    for binop in (n for n in ast.walk(node) if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mult, ast.Div))):
        sides = (binop.left, binop.right) if isinstance(binop.op, ast.Mult) else (binop.right,)
        for side in sides:
            at = int(side.id[1:]) if isinstance(side, ast.Name) and re.fullmatch(r"v\d+", side.id) else None
            if at is not None and (values[at] == 100 if isinstance(binop.op, ast.Mult) else values[at] == len(_terms(binop.left))):
                found.add(at)
    return frozenset(found)


def _terms(node: ast.AST) -> list[ast.AST]:
    """The terms a sum adds (one for any other expression), its sign aside."""
    if isinstance(node, ast.UnaryOp):
        return _terms(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _terms(node.left) + _terms(node.right)
    return [node]


def _evaluate(node: ast.AST, values: list[float], expression: str) -> float:
    if isinstance(node, ast.Name) and re.fullmatch(r"v\d+", node.id):
        return values[int(node.id[1:])]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _SIGNS:
        return _SIGNS[type(node.op)](_evaluate(node.operand, values, expression))
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _evaluate(node.left, values, expression), _evaluate(node.right, values, expression)
        if isinstance(node.op, ast.Div) and right == 0:
            raise ExpressionError(f"division by zero in {expression!r}")
        return _OPERATORS[type(node.op)](left, right)
    raise ExpressionError(f"only numbers, [n], + - * / and parentheses are allowed: {expression!r}")


def format_result(value: float) -> str:
    """A computed value as an answer states it: thousands separated, at most four decimals."""
    return f"{round(value, 4):,.4f}".rstrip("0").rstrip(".")
