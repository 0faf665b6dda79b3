"""What a ``merge_into`` run asks for (Paimon's ``MergeIntoProcedure`` arguments), and its SQL.

Pure (no Spark): the arguments, checked the way Java's procedure and ``MergeIntoAction`` check
them, and the Spark SQL text of each clause. ``''`` means "not given" for every argument, as in
Java's procedure (``nullable``). Semantics, as ``MergeIntoAction`` builds them:

* matched pairs: ``target INNER JOIN source ON merge_condition``;
* matched-upsert: every target column, with the ``matched_upsert_setting`` assignments
  (``col=expr,...``) applied, or ``*``: the source row's columns in order;
* matched-delete: given only if ``matched_delete_condition`` is not empty (``TRUE``: every match);
* not-matched-insert: source rows with no target row satisfying the merge condition
  (``NOT EXISTS``), filtered by ``not_matched_insert_condition``; ``not_matched_insert_values`` is
  the list of values in target column order, or ``*`` (the source row).

Java emits the upsert and the delete rows of one matched pair both when both conditions hold
(their order is undefined). Here the clauses are applied like SQL ``MERGE`` clauses in the order
of ``MergeIntoAction``'s syntax (``WHEN MATCHED ... UPDATE`` before ``WHEN MATCHED ... DELETE``):
the first clause whose condition holds decides, so a pair is upserted or deleted, never both. An
unconditional upsert with a delete clause would leave the delete dead: refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from paimon_core.exceptions import InvalidArgumentError

__all__ = [
    "ARG_NAMES",
    "MergeIntoError",
    "ACTION_DELETE",
    "ACTION_NONE",
    "ACTION_UPSERT",
    "MergeIntoSpec",
    "parse_assignments",
    "quote",
    "split_top_level",
]

#: Paimon's argument names, in the procedure's order.
ARG_NAMES = (
    "target_table",
    "target_alias",
    "source_sqls",
    "source_table",
    "merge_condition",
    "matched_upsert_condition",
    "matched_upsert_setting",
    "not_matched_insert_condition",
    "not_matched_insert_values",
    "matched_delete_condition",
)

#: What a matched pair does (the ``__merge_action`` column of the matched pairs).
ACTION_NONE = 0
ACTION_UPSERT = 1
ACTION_DELETE = 2


class MergeIntoError(InvalidArgumentError):
    """A merge_into argument is invalid, or the data makes the merge ambiguous."""


def quote(name: str) -> str:
    """``name`` as a Spark SQL identifier (backticks, inner backticks doubled)."""
    return "`" + name.replace("`", "``") + "`"


def split_top_level(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside quotes, backticks and parentheses (so ``concat(a, b)`` stays whole)."""
    parts: list[str] = []
    depth = 0
    quote_char: str | None = None
    start = 0
    i = 0
    while i < len(text):
        c = text[i]
        if quote_char is not None:
            if c == "\\" and quote_char != "`":
                i += 2
                continue
            if c == quote_char:
                quote_char = None
        elif c in ("'", '"', "`"):
            quote_char = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
            i = start
            continue
        i += 1
    parts.append(text[start:])
    return parts


def _column_name(raw: str, qualifiers: Sequence[str]) -> str:
    name = raw.strip()
    for q in qualifiers:  # accept ``T.col`` / ```T`.`col``` as well as ``col``
        for prefix in (f"{q}.", f"{quote(q)}."):
            if name.startswith(prefix):
                name = name[len(prefix) :]
    if len(name) >= 2 and name[0] == "`" and name[-1] == "`":
        name = name[1:-1].replace("``", "`")
    return name


def parse_assignments(setting: str, qualifiers: Sequence[str] = ()) -> dict[str, str]:
    """``'a=expr, b=expr'`` -> ``{'a': 'expr', 'b': 'expr'}`` (Java's parseCommaSeparatedKeyValues,
    but commas inside parentheses or quotes do not split)."""
    out: dict[str, str] = {}
    for part in split_top_level(setting, ","):
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        if not eq or not key.strip() or not value.strip() or value.startswith("="):
            raise MergeIntoError(f"matched_upsert_setting: expected 'column=expression', got {part.strip()!r}")
        name = _column_name(key, qualifiers)
        if name in out:
            raise MergeIntoError(f"matched_upsert_setting assigns column {name!r} twice")
        out[name] = value.strip()
    if not out:
        raise MergeIntoError(f"matched_upsert_setting has no assignment: {setting!r}")
    return out


def _opt(value: str | None) -> str | None:
    return value.strip() if value is not None and value.strip() else None


@dataclass(frozen=True)
class MergeIntoSpec:
    """The arguments of one merge_into call; ``None`` for an argument not given (``''``)."""

    target_table: str
    source_table: str
    merge_condition: str
    target_alias: str | None = None
    source_sqls: tuple[str, ...] = ()
    matched_upsert_condition: str | None = None
    matched_upsert_setting: str | None = None
    not_matched_insert_condition: str | None = None
    not_matched_insert_values: str | None = None
    matched_delete_condition: str | None = None

    @classmethod
    def of(cls, values: dict[str, str | None]) -> MergeIntoSpec:
        """From the raw arguments (``''`` = not given); raises :class:`MergeIntoError` as Java's
        procedure does for a missing source table, merge condition or action value."""
        v = {k: _opt(values.get(k)) for k in ARG_NAMES}
        target = v["target_table"]
        if target is None:
            raise MergeIntoError("Must specify target table (db.table).")
        if target.count(".") != 1 or not all(target.split(".")):
            raise MergeIntoError(f"target_table must be db.table, got {target!r}")
        if v["source_table"] is None:
            raise MergeIntoError("Must specify source table.")
        if v["merge_condition"] is None:
            raise MergeIntoError("Must specify merge condition.")
        if v["matched_upsert_condition"] is not None and v["matched_upsert_setting"] is None:
            raise MergeIntoError("matched-upsert must set the 'matched_upsert_setting' argument")
        if v["not_matched_insert_condition"] is not None and v["not_matched_insert_values"] is None:
            raise MergeIntoError("not-matched-insert must set the 'not_matched_insert_values' argument")
        sqls = tuple(s.strip() for s in split_top_level(v["source_sqls"] or "", ";") if s.strip())
        spec = cls(
            target_table=target,
            source_table=v["source_table"] or "",
            merge_condition=v["merge_condition"] or "",
            target_alias=v["target_alias"],
            source_sqls=sqls,
            matched_upsert_condition=v["matched_upsert_condition"],
            matched_upsert_setting=v["matched_upsert_setting"],
            not_matched_insert_condition=v["not_matched_insert_condition"],
            not_matched_insert_values=v["not_matched_insert_values"],
            matched_delete_condition=v["matched_delete_condition"],
        )
        if not (spec.upsert or spec.delete or spec.insert):
            raise MergeIntoError(
                "Must specify at least one merge action: matched_upsert_setting, "
                "not_matched_insert_values or matched_delete_condition"
            )
        if spec.upsert and spec.delete and spec.matched_upsert_condition is None:
            raise MergeIntoError(
                "matched_delete_condition can never apply: the matched-upsert has no condition and is "
                "applied first (give matched_upsert_condition, e.g. the negation of the delete condition)"
            )
        return spec

    # --- the clauses ------------------------------------------------------------------------
    @property
    def upsert(self) -> bool:
        return self.matched_upsert_setting is not None

    @property
    def delete(self) -> bool:
        return self.matched_delete_condition is not None

    @property
    def insert(self) -> bool:
        return self.not_matched_insert_values is not None

    @property
    def matched(self) -> bool:
        """Whether a matched clause exists (then a target row must match one source row at most)."""
        return self.upsert or self.delete

    @property
    def target_name(self) -> str:
        """The name conditions use for the target: the alias, else the table's name (``T``)."""
        return self.target_alias or self.target_table.split(".")[1]

    @property
    def source_name(self) -> str:
        """The name conditions use for the source: the last part of ``source_table`` (``S``)."""
        return self.source_table.split(".")[-1].strip("`")

    @property
    def source_sql_name(self) -> str:
        """``source_table`` as a Spark SQL name (each part in backticks)."""
        return ".".join(quote(p.strip("`")) for p in self.source_table.split("."))

    def to_dict(self) -> dict[str, object]:
        return {
            "target_table": self.target_table,
            "target_alias": self.target_alias,
            "source_sqls": list(self.source_sqls),
            "source_table": self.source_table,
            "merge_condition": self.merge_condition,
            "matched_upsert_condition": self.matched_upsert_condition,
            "matched_upsert_setting": self.matched_upsert_setting,
            "not_matched_insert_condition": self.not_matched_insert_condition,
            "not_matched_insert_values": self.not_matched_insert_values,
            "matched_delete_condition": self.matched_delete_condition,
        }

    # --- SQL ----------------------------------------------------------------------------------
    def upsert_values(self, target_columns: Sequence[str], source_columns: Sequence[str]) -> list[str]:
        """One SQL expression per target column for a matched-upsert (Java's projection)."""
        setting = self.matched_upsert_setting or ""
        t, s = quote(self.target_name), quote(self.source_name)
        if setting == "*":
            if len(source_columns) != len(target_columns):
                raise MergeIntoError(
                    f"matched_upsert_setting '*' needs the source to have the target's {len(target_columns)} "
                    f"columns {list(target_columns)}, but {self.source_table} has {list(source_columns)}"
                )
            return [f"{s}.{quote(c)}" for c in source_columns]
        changes = parse_assignments(setting, (self.target_name,))
        unknown = [c for c in changes if c not in target_columns]
        if unknown:
            raise MergeIntoError(
                f"Invalid column reference {unknown[0]!r} of table {self.target_table!r} at matched-upsert "
                f"action; columns are {list(target_columns)}"
            )
        return [changes.get(c, f"{t}.{quote(c)}") for c in target_columns]

    def action_sql(self) -> str:
        """``CASE`` giving each matched pair its action (first matching clause wins)."""
        whens = []
        if self.upsert:
            whens.append(f"WHEN ({self.matched_upsert_condition or 'TRUE'}) THEN {ACTION_UPSERT}")
        if self.delete:
            whens.append(f"WHEN ({self.matched_delete_condition}) THEN {ACTION_DELETE}")
        return f"CASE {' '.join(whens)} ELSE {ACTION_NONE} END"

    def matched_sql(self, target_view: str, source_sql: str, select: Sequence[str]) -> str:
        """The matched pairs: ``SELECT <select> FROM target JOIN source ON <merge_condition>``.

        ``target_view``: the view holding the target rows; ``source_sql``: the source's SQL name."""
        return (
            f"SELECT {', '.join(select)} FROM {quote(target_view)} AS {quote(self.target_name)} "
            f"JOIN {self.source_from(source_sql)} ON ({self.merge_condition})"
        )

    def insert_sql(self, target_view: str, source_sql: str, source_columns: Sequence[str]) -> str:
        """Source rows with no matching target row, as the insert values (Java's ``NOT EXISTS``)."""
        s = quote(self.source_name)
        values = self.not_matched_insert_values or "*"
        select = ", ".join(f"{s}.{quote(c)}" for c in source_columns) if values == "*" else values
        where = f" WHERE ({self.not_matched_insert_condition})" if self.not_matched_insert_condition else ""
        return (
            f"SELECT {select} FROM {self.source_from(source_sql)} LEFT ANTI JOIN {quote(target_view)} AS "
            f"{quote(self.target_name)} ON ({self.merge_condition}){where}"
        )

    def source_from(self, source_sql: str) -> str:
        """The source in a FROM clause, under the name conditions use."""
        return f"{source_sql} AS {quote(self.source_name)}"
