"""README's compatibility table is what the code does (issue 25).

:func:`tests.tools.compat_table.run_matrix` builds every table kind (our writer, or pypaimon 2.1.0
where a user of that kind would write it), runs read, write, compact, expire, orphan clean and
rollback on a fresh copy of each through the Python API, and checks every supported cell against
pypaimon 2.1.0's read of the result (an orphan clean must also remove a planted orphan); a refused
cell must leave the table's directory byte-for-byte unchanged. The README section between the
markers must equal the rendered matrix: a cell that changes fails here, and
``python -m tests.tools.compat_table`` regenerates it.
"""

from __future__ import annotations

from pathlib import Path

from tests.tools.compat_table import README, readme_section, render, run_matrix
from tests.tools.compat_table import failures as matrix_failures
from tests.tools.table_kinds import KINDS


def test_readme_compatibility_table_is_measured(tmp_path: Path) -> None:
    cells = run_matrix(str(tmp_path))
    failed = list(matrix_failures(cells))
    assert not failed, "\n".join(failed)
    for spec in KINDS:  # a refused kind is refused by every operation, naming its feature
        if spec.refused_as:
            for (name, op), cell in cells.items():
                if name == spec.name:
                    assert cell.status == "refused" and f"'{spec.refused_as}'" in cell.message, (name, op, cell)
    table = render(cells)
    assert readme_section(README.read_text()) == table, (
        "README.md's compatibility table differs from what the code does; run python -m tests.tools.compat_table\n"
        + table
    )
