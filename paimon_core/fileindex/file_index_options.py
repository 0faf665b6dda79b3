"""Which columns get which data-file index (Java's ``FileIndexOptions`` and the file-index part of
``SchemaValidation``).

``file-index.<type>.columns`` lists the columns (``col`` or, for a MAP column with string keys,
``col[key]``) that get an index of ``<type>``; ``file-index.<type>.<column>.<option>`` sets one
option of one column's index (``items`` and ``fpp`` of a bloom filter, ...);
``file-index.in-manifest-threshold`` (500 B) decides whether a data file's index goes into its
manifest entry or into a ``<data file>.index`` file next to it; ``file-index.read.enabled``
whether reads use them.

:func:`check_file_index` is Java's ``SchemaValidation.validateFileIndex`` plus the option parsing
errors of ``FileIndexOptions``: an unknown index type, an empty column name, an option for a
column the type does not list, a column that is not in the table, a nested column on a non-map,
a column type the index does not support. Each is an :class:`~paimon_core.exceptions.InvalidOptionError`
naming the option.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from paimon_core.exceptions import InvalidOptionError
from paimon_core.fileindex.java_compat import JavaHashMap, java_split, java_string_hash, string_map, to_int32
from paimon_core.options import parse_memory_size
from paimon_core.schema.data_types import DataField, DataType, MapType

__all__ = [
    "FILE_INDEX_PREFIX",
    "IN_MANIFEST_THRESHOLD",
    "JAVA_INDEX_TYPES",
    "READ_ENABLED",
    "FileIndexColumn",
    "FileIndexOptions",
    "check_file_index",
    "unsupported_type_reason",
]

FILE_INDEX_PREFIX = "file-index."
COLUMNS_SUFFIX = ".columns"
IN_MANIFEST_THRESHOLD = "file-index.in-manifest-threshold"
READ_ENABLED = "file-index.read.enabled"
DEFAULT_IN_MANIFEST_THRESHOLD = "500 B"

#: Java's ``FileIndexerFactory`` identifiers (META-INF/services), with the type roots each
#: factory's ``validate`` accepts (``FastHash``, ``BitmapTypeVisitor``, BSI's value mapper,
#: range bitmap's ``KeyFactory``).
_INTS = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_TIMES = ("DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ")
JAVA_INDEX_TYPES: dict[str, frozenset[str]] = {
    "bloom-filter": frozenset(("CHAR", "VARCHAR", "BINARY", "VARBINARY", *_INTS, "FLOAT", "DOUBLE", *_TIMES)),
    "bitmap": frozenset(("CHAR", "VARCHAR", "BOOLEAN", *_INTS, "FLOAT", "DOUBLE", *_TIMES)),
    "bsi": frozenset(("DECIMAL", *_INTS, *_TIMES)),
    "range-bitmap": frozenset(("CHAR", "VARCHAR", "BOOLEAN", "DECIMAL", *_INTS, "FLOAT", "DOUBLE", *_TIMES)),
}


@dataclass(frozen=True)
class FileIndexColumn:
    """An indexed column: a top-level column, or one key of a MAP column (``col[key]``)."""

    name: str
    nested: str | None = None

    @property
    def full_name(self) -> str:
        """The name the index is stored under (Java's ``FileIndexCommon.toMapKey`` for a map key)."""
        return self.name if self.nested is None else f"{self.name}[{self.nested}]"

    def java_hash(self) -> int:
        """Java's ``Column.hashCode``: ``Arrays.hashCode({name, nested, isNested})``."""
        h = 31 + java_string_hash(self.name)
        h = 31 * h + (0 if self.nested is None else java_string_hash(self.nested))
        return to_int32(31 * h + (1231 if self.nested is not None else 1237))

    @staticmethod
    def parse(text: str) -> FileIndexColumn:
        start = text.find("[")
        if start != -1 and text.endswith("]"):  # Java's topLevelIndexOfNested
            return FileIndexColumn(text[:start], text[start + 1 : -1])
        return FileIndexColumn(text)


class FileIndexOptions:
    """The parsed ``file-index.*`` options of a table (Java's ``FileIndexOptions``).

    :attr:`columns` maps each column to its index types and their options, in the order Java's
    ``HashMap`` s iterate them (which fixes the order of the bytes Java writes).
    """

    def __init__(self, options: Mapping[str, str]) -> None:
        self.in_manifest_threshold = parse_memory_size(
            options.get(IN_MANIFEST_THRESHOLD, DEFAULT_IN_MANIFEST_THRESHOLD), key=IN_MANIFEST_THRESHOLD
        )
        self.read_enabled = options.get(READ_ENABLED, "true").strip().lower() != "false"
        self._types: JavaHashMap[FileIndexColumn, JavaHashMap[str, dict[str, str]]] = JavaHashMap(
            FileIndexColumn.java_hash
        )
        self._map_top: JavaHashMap[FileIndexColumn, JavaHashMap[str, dict[str, str]]] = JavaHashMap(
            FileIndexColumn.java_hash
        )
        self._setup(options)

    def _setup(self, options: Mapping[str, str]) -> None:
        ordered: JavaHashMap[str, str] = string_map()
        for k, v in options.items():
            ordered.put(k, v)
        column_options: list[tuple[str, str]] = []
        for key, value in ordered.items():
            if not key.startswith(FILE_INDEX_PREFIX):
                continue
            if key.endswith(COLUMNS_SUFFIX):
                index_type = key[len(FILE_INDEX_PREFIX) : -len(COLUMNS_SUFFIX)]
                for name in java_split(value, ","):
                    if not name.strip():
                        raise InvalidOptionError(
                            f"Wrong option in {key}, should not have empty column", key=key, value=value
                        )
                    self._add(FileIndexColumn.parse(name.strip()), index_type)
            else:
                column_options.append((key, value))
        for key, value in column_options:
            parts = key[len(FILE_INDEX_PREFIX) :].split(".")
            if len(parts) != 3:
                continue  # Java ignores the options it does not expect (in-manifest-threshold ...)
            index_type, cname, opkey = parts
            target = self._options_of(FileIndexColumn.parse(cname), index_type)
            if target is None:
                target = self._top_options_of(FileIndexColumn(cname), index_type)
            if target is None:
                raise InvalidOptionError(
                    f"Wrong file index option '{key}': column '{cname}' is not declared in "
                    f"'file-index.{index_type}.columns'. Please add 'file-index.{index_type}.columns' = '{cname}' "
                    "before setting column options. For map nested index, declare it like '<map-column>[<map-key>]'.",
                    key=key,
                    value=value,
                )
            target[opkey] = value

    def _add(self, column: FileIndexColumn, index_type: str) -> None:
        self._types.compute_if_absent(column, string_map).compute_if_absent(index_type, dict)
        if column.nested is not None:
            self._map_top.compute_if_absent(FileIndexColumn(column.name), string_map).compute_if_absent(
                index_type, dict
            )

    def _options_of(self, column: FileIndexColumn, index_type: str) -> dict[str, str] | None:
        types = self._types.get(column)
        return None if types is None else types.get(index_type)

    def _top_options_of(self, column: FileIndexColumn, index_type: str) -> dict[str, str] | None:
        types = self._map_top.get(column)
        return None if types is None else types.get(index_type)

    def map_top_level_options(self, column: str, index_type: str) -> dict[str, str]:
        """The options given for a whole MAP column (``file-index.<type>.<map>.<option>``)."""
        return dict(self._top_options_of(FileIndexColumn(column), index_type) or {})

    def is_empty(self) -> bool:
        return len(self._types) == 0

    @property
    def columns(self) -> list[tuple[FileIndexColumn, list[tuple[str, dict[str, str]]]]]:
        """``[(column, [(index type, options)...])...]`` in Java's iteration order."""
        return [(c, types.items()) for c, types in self._types.items()]

    def index_types(self) -> set[str]:
        return {t for _, types in self.columns for t, _ in types}


def unsupported_type_reason(index_type: str, data_type: DataType) -> str | None:
    """Why ``index_type`` cannot index a column of ``data_type`` (None: it can)."""
    roots = JAVA_INDEX_TYPES.get(index_type)
    if roots is None:
        return f"Can't find file index for type: {index_type}"
    if data_type.type_root not in roots:
        return f"Does not support type {data_type.type_root.lower()}"
    return None


def check_file_index(
    fields: Sequence[DataField], options: Mapping[str, str], *, action: str, table: str | None = None
) -> FileIndexOptions:
    """The parsed options, or :class:`InvalidOptionError` naming the first problem (Java's
    ``SchemaValidation.validateFileIndex``); ``action`` says what was refused."""
    where = f" of {table}" if table else ""
    try:
        parsed = FileIndexOptions(options)
    except InvalidOptionError as e:
        raise InvalidOptionError(f"Cannot {action}: {e}", key=e.key, value=e.value) from None
    by_name = {f.name: f for f in fields}
    for column, types in parsed.columns:
        for index_type, _ in types:
            key = f"{FILE_INDEX_PREFIX}{index_type}{COLUMNS_SUFFIX}"
            value = options.get(key)
            if index_type not in JAVA_INDEX_TYPES:
                raise InvalidOptionError(
                    f"Cannot {action}: option '{key}'{where} names an unknown file index type '{index_type}' "
                    f"(Can't find file index for type: {index_type}; types: {', '.join(JAVA_INDEX_TYPES)})",
                    key=key,
                    value=value,
                )
            field = by_name.get(column.name)
            if field is None:
                raise InvalidOptionError(
                    f"Cannot {action}: Column '{column.name}' specified in '{key}'{where} does not exist in table "
                    f"schema. Existing columns: {[f.name for f in fields]}.",
                    key=key,
                    value=value,
                )
            data_type = field.type
            if column.nested is not None:
                if not isinstance(data_type, MapType):
                    raise InvalidOptionError(
                        f"Cannot {action}: Column '{column.name}' is configured as nested column in '{key}'{where} "
                        "but is not a map type. Only map type supports nested column.",
                        key=key,
                        value=value,
                    )
                if data_type.key.type_root not in ("CHAR", "VARCHAR"):
                    raise InvalidOptionError(
                        f"Cannot {action}: Column '{column.name}' is configured as nested column in '{key}'{where}, "
                        f"but its map key type is {data_type.key}. Only CHAR/VARCHAR/STRING is supported.",
                        key=key,
                        value=value,
                    )
                data_type = data_type.value
            reason = unsupported_type_reason(index_type, data_type)
            if reason is not None:
                raise InvalidOptionError(
                    f"Cannot {action}: Column '{column.name}' with type '{data_type}' is not supported by "
                    f"'{index_type}' index ({key}{where}). {reason}",
                    key=key,
                    value=value,
                )
    return parsed
