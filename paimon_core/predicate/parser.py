"""A small SQL ``WHERE`` clause parser for the CLI, producing :class:`Predicate` trees.

Grammar (keywords are case-insensitive; ``AND`` binds tighter than ``OR``, ``NOT`` tighter still)::

    expr      := and_expr (OR and_expr)*
    and_expr  := unary (AND unary)*
    unary     := NOT unary | '(' expr ')' | predicate
    predicate := operand (= | == | != | <> | < | <= | > | >=) operand    -- one side a column
               | column [NOT] IN '(' literal (',' literal)* ')'
               | column [NOT] BETWEEN literal AND literal
               | column IS [NOT] NULL
               | column LIKE 'pattern'     -- 'abc%', '%abc', '%abc%' or 'abc'
               | column                    -- a BOOLEAN column: column = TRUE
    column    := name | `quoted name` (`` escapes a backquote)
    literal   := [+|-] number | 'string' ('' escapes a quote) | TRUE | FALSE | NULL
               | DATE 'yyyy-mm-dd' | TIME 'hh:mm:ss[.fff]' | TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.f...]'
               | X'hex bytes'

``NOT`` is pushed down to the leaves (``NOT LIKE`` cannot be). A literal must be exactly
representable in the column's type (``int_col < 1.5`` is an error, not a rounding).
Errors are :class:`InvalidArgumentError` with the 0-based ``position`` in the text.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal, NoReturn

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.predicate.builder import PredicateBuilder
from paimon_core.predicate.predicate import Predicate, and_all, or_all
from paimon_core.schema.data_types import (
    BooleanType,
    DataField,
    DataType,
    DateType,
    DecimalType,
    LocalZonedTimestampType,
    TimestampType,
    TimeType,
    is_binary,
    is_floating,
    is_integer,
    is_string,
)

__all__ = ["parse_predicate"]

_KEYWORDS = frozenset({"AND", "OR", "NOT", "IN", "IS", "NULL", "LIKE", "TRUE", "FALSE", "BETWEEN"})
_TYPED_LITERAL_KEYWORDS = frozenset({"DATE", "TIME", "TIMESTAMP", "X"})
_COMPARISON_OPS = {
    "=": "equal",
    "==": "equal",
    "!=": "not_equal",
    "<>": "not_equal",
    "<": "less_than",
    "<=": "less_or_equal",
    ">": "greater_than",
    ">=": "greater_or_equal",
}
_FLIPPED = {"=": "=", "==": "==", "!=": "!=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<qident>`(?:[^`]|``)*`)
  | (?P<string>'(?:[^']|'')*')
  | (?P<op><=|>=|<>|!=|==|=|<|>)
  | (?P<punct>[(),+-])
    """,
    re.VERBOSE,
)

TokenKind = Literal["number", "word", "qident", "string", "op", "punct", "eof"]


@dataclass(frozen=True)
class _Token:
    kind: TokenKind
    text: str
    pos: int

    def is_keyword(self, *words: str) -> bool:
        return self.kind == "word" and self.text.upper() in words

    def describe(self) -> str:
        return "end of input" if self.kind == "eof" else repr(self.text)


@dataclass(frozen=True)
class _Literal:
    """A parsed literal: ``kind`` says how it was written, ``value`` is its Python value."""

    kind: Literal["number", "string", "bool", "null", "date", "time", "timestamp", "bytes"]
    value: object
    pos: int


@dataclass(frozen=True)
class _Column:
    name: str
    pos: int


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            what = "unterminated quote" if text[pos] in "'`" else f"unexpected character {text[pos]!r}"
            raise _error(f"Syntax error: {what}", pos)
        kind = m.lastgroup
        if kind != "ws" and kind is not None:
            tokens.append(_Token(kind, m.group(), pos))  # type: ignore[arg-type]
        pos = m.end()
    tokens.append(_Token("eof", "", len(text)))
    return tokens


def _error(message: str, pos: int) -> InvalidArgumentError:
    return InvalidArgumentError(f"{message} at position {pos}", position=pos)


def parse_predicate(text: str, fields: Sequence[DataField]) -> Predicate:
    """Parse a SQL ``WHERE`` condition over ``fields`` (see the module docstring for the grammar).

    Raises:
        InvalidArgumentError: on a syntax error, an unknown column, a literal that does not fit
            the column's type, or an unsupported construct; the message gives the position.
    """
    return _Parser(text, fields).parse()


class _Parser:
    """Recursive-descent parser over the token list."""

    def __init__(self, text: str, fields: Sequence[DataField]) -> None:
        self._tokens = _tokenize(text)
        self._i = 0
        self._builder = PredicateBuilder(fields)
        self._types = {f.name: f.type for f in fields}

    # --- token helpers ---------------------------------------------------------------------

    @property
    def _tok(self) -> _Token:
        return self._tokens[self._i]

    def _peek(self, offset: int = 1) -> _Token:
        return self._tokens[min(self._i + offset, len(self._tokens) - 1)]

    def _next(self) -> _Token:
        tok = self._tok
        if tok.kind != "eof":
            self._i += 1
        return tok

    def _accept_keyword(self, *words: str) -> _Token | None:
        if self._tok.is_keyword(*words):
            return self._next()
        return None

    def _expect_keyword(self, word: str) -> _Token:
        tok = self._accept_keyword(word)
        if tok is None:
            self._fail(f"expected {word}")
        return tok

    def _expect_punct(self, text: str) -> _Token:
        if self._tok.kind == "punct" and self._tok.text == text:
            return self._next()
        self._fail(f"expected {text!r}")

    def _fail(self, expected: str) -> NoReturn:
        raise _error(f"Syntax error: {expected}, got {self._tok.describe()}", self._tok.pos)

    # --- grammar -----------------------------------------------------------------------------

    def parse(self) -> Predicate:
        if self._tok.kind == "eof":
            self._fail("expected a condition")
        predicate = self._or()
        if self._tok.kind != "eof":
            self._fail("expected AND, OR or end of input")
        return predicate

    def _or(self) -> Predicate:
        children = [self._and()]
        while self._accept_keyword("OR"):
            children.append(self._and())
        return or_all(children)

    def _and(self) -> Predicate:
        children = [self._unary()]
        while self._accept_keyword("AND"):
            children.append(self._unary())
        return and_all(children)

    def _unary(self) -> Predicate:
        not_tok = self._accept_keyword("NOT")
        if not_tok is not None:
            return self._negate(self._unary(), not_tok.pos)
        if self._tok.kind == "punct" and self._tok.text == "(":
            self._next()
            inner = self._or()
            self._expect_punct(")")
            return inner
        return self._predicate()

    def _negate(self, predicate: Predicate, pos: int) -> Predicate:
        negated = predicate.negate()
        if negated is None:
            raise _error(f"NOT is not supported for {predicate}", pos)
        return negated

    def _predicate(self) -> Predicate:
        left = self._operand()
        if isinstance(left, _Column):
            return self._column_predicate(left)
        op = self._tok
        if op.kind != "op":
            self._fail("expected a comparison operator after a literal")
        self._next()
        right = self._operand()
        if not isinstance(right, _Column):
            raise _error("Syntax error: one side of a comparison must be a column", right.pos)
        return self._compare(right, _FLIPPED[op.text], left)

    def _column_predicate(self, column: _Column) -> Predicate:
        tok = self._tok
        if tok.kind == "op":
            self._next()
            right = self._operand()
            if isinstance(right, _Column):
                raise _error("Comparing two columns is not supported", right.pos)
            return self._compare(column, tok.text, right)
        if tok.is_keyword("IS"):
            self._next()
            negated = self._accept_keyword("NOT") is not None
            self._expect_keyword("NULL")
            return self._build(
                column.pos, self._builder.is_not_null if negated else self._builder.is_null, column.name
            )
        not_tok = self._accept_keyword("NOT")
        if self._tok.is_keyword("IN"):
            predicate = self._in(column)
        elif self._tok.is_keyword("BETWEEN"):
            predicate = self._between(column)
        elif self._tok.is_keyword("LIKE"):
            predicate = self._like(column)
        elif not_tok is not None:
            self._fail("expected IN, BETWEEN or LIKE after NOT")
        else:
            return self._boolean_column(column)
        return predicate if not_tok is None else self._negate(predicate, not_tok.pos)

    def _boolean_column(self, column: _Column) -> Predicate:
        t = self._column_type(column)
        if not isinstance(t, BooleanType):
            self._fail(f"expected an operator after column {column.name!r}")
        return self._build(column.pos, self._builder.equal, column.name, True)

    def _compare(self, column: _Column, op: str, literal: _Literal) -> Predicate:
        method: Callable[..., Predicate] = getattr(self._builder, _COMPARISON_OPS[op])
        return self._build(column.pos, method, column.name, self._coerce(column, literal))

    def _in(self, column: _Column) -> Predicate:
        self._next()
        self._expect_punct("(")
        literals = [self._literal()]
        while self._tok.kind == "punct" and self._tok.text == ",":
            self._next()
            literals.append(self._literal())
        self._expect_punct(")")
        values = [self._coerce(column, lit) for lit in literals]
        return self._build(column.pos, self._builder.is_in, column.name, values)

    def _between(self, column: _Column) -> Predicate:
        self._next()
        low = self._coerce(column, self._literal())
        self._expect_keyword("AND")
        high = self._coerce(column, self._literal())
        return and_all(
            (
                self._build(column.pos, self._builder.greater_or_equal, column.name, low),
                self._build(column.pos, self._builder.less_or_equal, column.name, high),
            )
        )

    def _like(self, column: _Column) -> Predicate:
        self._next()
        pattern = self._literal()
        if pattern.kind != "string":
            raise _error("LIKE needs a 'string' pattern", pattern.pos)
        return self._build(column.pos, self._builder.like, column.name, pattern.value)

    # --- operands ----------------------------------------------------------------------------

    def _operand(self) -> _Column | _Literal:
        tok = self._tok
        if tok.kind == "qident":
            self._next()
            return _Column(tok.text[1:-1].replace("``", "`"), tok.pos)
        if tok.kind == "word" and not tok.is_keyword(*_KEYWORDS):
            is_typed_literal = tok.is_keyword(*_TYPED_LITERAL_KEYWORDS) and self._peek().kind == "string"
            if not is_typed_literal:
                self._next()
                return _Column(tok.text, tok.pos)
        return self._literal()

    def _literal(self) -> _Literal:
        tok = self._tok
        if tok.kind == "punct" and tok.text in "+-":
            self._next()
            number = self._tok
            if number.kind != "number":
                self._fail(f"expected a number after {tok.text!r}")
            self._next()
            return _Literal("number", _number(tok.text + number.text, number.pos), tok.pos)
        if tok.kind == "number":
            self._next()
            return _Literal("number", _number(tok.text, tok.pos), tok.pos)
        if tok.kind == "string":
            self._next()
            return _Literal("string", _unquote(tok.text), tok.pos)
        if tok.is_keyword("TRUE", "FALSE"):
            self._next()
            return _Literal("bool", tok.text.upper() == "TRUE", tok.pos)
        if tok.is_keyword("NULL"):
            self._next()
            return _Literal("null", None, tok.pos)
        if tok.is_keyword(*_TYPED_LITERAL_KEYWORDS) and self._peek().kind == "string":
            self._next()
            return _typed_literal(tok.text.upper(), _unquote(self._next().text), tok.pos)
        self._fail("expected a literal")

    # --- types -------------------------------------------------------------------------------

    def _column_type(self, column: _Column) -> DataType:
        t = self._types.get(column.name)
        if t is None:
            known = ", ".join(self._types)
            raise _error(f"Unknown column {column.name!r} (columns: {known})", column.pos)
        return t

    def _coerce(self, column: _Column, literal: _Literal) -> object:
        """The literal as a value of the column's type, refusing lossy conversions."""
        t = self._column_type(column)
        value, kind = literal.value, literal.kind
        if kind == "null":
            return None
        ok: bool
        if isinstance(t, BooleanType):
            ok = kind == "bool"
        elif is_integer(t):
            ok = kind == "number" and isinstance(value, Decimal) and value == value.to_integral_value()
            value = int(value) if ok else value  # type: ignore[call-overload]
        elif isinstance(t, DecimalType):
            ok = kind == "number" and isinstance(value, Decimal) and _fits_scale(value, t.scale)
            if kind == "number" and not ok:
                raise _error(
                    f"Literal {value} has more than {t.scale} fraction digits for {t} column {column.name!r}",
                    literal.pos,
                )
        elif is_floating(t):
            ok = kind == "number"
            value = float(value) if ok else value  # type: ignore[arg-type]
        elif is_string(t):
            ok = kind == "string"
        elif is_binary(t):
            ok = kind in ("bytes", "string")
            value = value.encode("utf-8") if isinstance(value, str) else value
        elif isinstance(t, DateType):
            ok = kind in ("date", "string")
        elif isinstance(t, TimeType):
            ok = kind in ("time", "string")
        elif isinstance(t, (TimestampType, LocalZonedTimestampType)):
            ok = kind in ("timestamp", "date", "string")
        else:
            raise _error(f"Column {column.name!r} of type {t} cannot be compared", column.pos)
        if not ok:
            raise _error(f"A {kind} literal does not fit {t} column {column.name!r}", literal.pos)
        return value

    def _build(self, pos: int, method: Callable[..., Predicate], *args: object) -> Predicate:
        try:
            return method(*args)
        except InvalidArgumentError as e:
            raise _error(e.message, pos) from e


def _fits_scale(value: Decimal, scale: int) -> bool:
    exponent = value.normalize().as_tuple().exponent
    return isinstance(exponent, int) and -exponent <= scale


def _number(text: str, pos: int) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation as e:  # pragma: no cover - the token regex only matches numbers
        raise _error(f"Invalid number {text!r}", pos) from e


def _unquote(quoted: str) -> str:
    return quoted[1:-1].replace("''", "'")


def _typed_literal(keyword: str, text: str, pos: int) -> _Literal:
    try:
        if keyword == "DATE":
            return _Literal("date", dt.date.fromisoformat(text.strip()), pos)
        if keyword == "TIME":
            return _Literal("time", _check_time(text), pos)
        if keyword == "TIMESTAMP":
            return _Literal("timestamp", _check_timestamp(text), pos)
        return _Literal("bytes", bytes.fromhex(text), pos)
    except ValueError as e:
        raise _error(f"Invalid {keyword} literal {text!r}: {e}", pos) from e


_TIME_LITERAL = re.compile(r"\s*\d{1,2}:\d{2}(:\d{2}(\.\d{0,9})?)?\s*")
_TIMESTAMP_LITERAL = re.compile(r"\s*\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d{0,9})?)?)?\s*")


def _check_time(text: str) -> str:
    if not _TIME_LITERAL.fullmatch(text):
        raise ValueError("expected hh:mm[:ss[.fff]]")
    return text


def _check_timestamp(text: str) -> str:
    if not _TIMESTAMP_LITERAL.fullmatch(text):
        raise ValueError("expected yyyy-mm-dd[ hh:mm[:ss[.fffffffff]]]")
    return text
