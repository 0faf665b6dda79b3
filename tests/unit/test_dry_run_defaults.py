"""One ``dry_run`` default per action on every entry point, found by enumeration (no list here).

The entry points of a maintenance action:

* the Python API: every ``table.maintenance`` method with a ``dry_run`` parameter (its signature);
* the jobs: every job of ``spark_jobs.JOBS`` whose ``--help`` shows a dry-run flag (the default
  read from the help, nothing run); a job named as an API call that takes ``dry_run`` must have one;
* the Airflow operators: every operator class of ``paimon_airflow.operators`` with a ``dry_run``
  argument, for each action it declares (``actions``, else ``action``); a ``None`` default is
  resolved to the action's own the way the operator does;
* the DAGs of the DagBag with a ``dry_run`` or a ``mode`` Param (plan / apply / approve_in_ui).

The API, the jobs and the operators must agree per action (the API's default wins where there is
one). The DAGs follow their own rule, which holds for every action: a run a person starts from
the form as it opens changes nothing (``dry_run`` true, ``mode`` plan), whatever the action's
default, since the tests of the trigger forms (tests/airflow/test_ui_trigger_form.py) rely on it;
scheduled runs pass the value they need explicitly.

Operators and DAGs are read in a fresh interpreter with its own ``AIRFLOW_HOME`` (Airflow reads
its configuration once, on first import, and tests/airflow/conftest.py configures it for the
Airflow tests of the same session).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from paimon_core.table.maintenance import MaintenanceTable
from spark_jobs import JOBS

REPO = Path(__file__).resolve().parents[2]

#: Runs in the fresh interpreter: prints one JSON line with the operators' and the DAGs' defaults.
PROBE = r'''
import importlib, inspect, json, pkgutil, sys
from pathlib import Path

from airflow.dag_processing.dagbag import BundleDagBag
from airflow.sdk import BaseOperator

import paimon_airflow.operators as package
from paimon_airflow.operators.maintenance import resolve_dry_run

dags_folder = Path(sys.argv[1])


def actions_of(cls):
    own = getattr(cls, "action", None)
    return list(getattr(cls, "actions", ()) or ([own] if isinstance(own, str) else []))


operators = []
for info in pkgutil.iter_modules(package.__path__):
    module = importlib.import_module(f"{package.__name__}.{info.name}")
    for cls in vars(module).values():
        if not (inspect.isclass(cls) and issubclass(cls, BaseOperator) and cls.__module__ == module.__name__):
            continue
        param = inspect.signature(cls.__init__).parameters.get("dry_run")
        if param is None:
            continue
        actions = actions_of(cls)
        default = param.default
        operators.append({
            "class": cls.__name__,
            "actions": actions,
            "default": default if isinstance(default, bool) or default is None else repr(default),
            "resolved": {a: resolve_dry_run(default, a) for a in actions} if default is None else {},
        })

bag = BundleDagBag(dag_folder=str(dags_folder), bundle_path=dags_folder)
dags = []
for dag_id, dag in sorted(bag.dags.items()):
    params = {}
    for name, param in dag.params.items():
        schema = getattr(param, "schema", {}) or {}
        enum = schema.get("enum") or []
        if name == "dry_run" or {"plan", "apply"} <= set(enum):
            params[name] = {"default": param.value if param.has_value else None,
                            "description": getattr(param, "description", None) or schema.get("description", "")}
    classes = [getattr(t, "operator_class", None) or type(t) for t in dag.tasks]  # mapped: the class
    actions = sorted({a for c in classes for a in actions_of(c)})
    dags.append({"dag_id": dag_id, "params": params, "actions": actions})
print(json.dumps({"import_errors": {k: str(v) for k, v in bag.import_errors.items()},
                  "operators": operators, "dags": dags}))
'''


def api_defaults() -> dict[str, bool]:
    """``table.maintenance`` method -> its ``dry_run`` default."""
    out: dict[str, bool] = {}
    for name, member in vars(MaintenanceTable).items():
        if name.startswith("_") or not inspect.isfunction(member):
            continue
        param = inspect.signature(member).parameters.get("dry_run")
        if param is not None:
            assert isinstance(param.default, bool), f"table.maintenance.{name}: dry_run needs a bool default"
            out[name] = param.default
    return out


def job_help(job: str) -> str:
    """``python -m spark_jobs <job> --help``, in this process (argparse prints it and exits 0)."""
    module = importlib.import_module(JOBS[job])
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        module.main(["--help"])
    assert done.value.code in (0, None), f"{job} --help exited {done.value.code}"
    return out.getvalue()


#: An option's entry in argparse's help starts two spaces in; its wrapped help is indented further.
_DRY_RUN_OPTION = re.compile(r"^ {2}(--dry[-_]run\b.*)$")


def dry_run_default_of_help(job: str, text: str) -> bool | None:
    """The dry-run flag's default from a job's help: a switch (``--dry-run`` alone) is false; a
    flag taking a value (``--dry-run [BOOL]``) must say ``default: true|false``. None: no flag."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = _DRY_RUN_OPTION.match(line)
        if match is None:
            continue
        entry = [match.group(1)]
        for more in lines[i + 1 :]:  # the option's help, up to the next option or section
            if not more.strip() or re.match(r"^ {2}\S", more) or not more.startswith(" "):
                break
            entry.append(more.strip())
        text_of_option = " ".join(entry)
        flag_part = match.group(1).split("  ", 1)[0]
        if "BOOL" not in flag_part:
            return False  # a switch
        found = re.search(r"default: (true|false)\b", text_of_option)
        assert found, f"{job} --help: --dry-run takes a value but its help names no default: {text_of_option!r}"
        return found.group(1) == "true"
    return None


def job_defaults() -> dict[str, bool]:
    out: dict[str, bool] = {}
    for job in sorted(JOBS):
        default = dry_run_default_of_help(job, job_help(job))
        if default is not None:
            out[job] = default
    return out


@pytest.fixture(scope="module")
def airflow_side(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("airflow-home")
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "True",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "ERROR",
        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "plugins"), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(REPO / "dags")],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["import_errors"] == {}
    return result


def test_one_dry_run_default_per_action_on_the_api_jobs_and_operators(airflow_side: dict[str, Any]) -> None:
    api = api_defaults()
    jobs = job_defaults()
    by_action: dict[str, dict[str, bool]] = defaultdict(dict)
    for action, default in api.items():
        by_action[action]["table.maintenance"] = default
    for job, default in jobs.items():
        by_action[job][f"spark_jobs {job}"] = default
    undeclared = []
    for op in airflow_side["operators"]:
        if not op["actions"]:
            undeclared.append(op["class"])
        for action in op["actions"]:
            default = op["default"] if op["default"] is not None else op["resolved"][action]
            assert isinstance(default, bool), f"{op['class']}: dry_run default {op['default']!r}"
            by_action[action][op["class"]] = default
    assert undeclared == [], "operators with dry_run must declare the actions they run (`actions`)"

    # enumeration found something of each kind (an import that stopped finding them fails here)
    assert len(api) >= 20 and len(jobs) >= 20 and len(airflow_side["operators"]) >= 12, (api, jobs)

    # a job named as an API call that takes dry_run has the flag
    assert sorted(a for a in api if a in JOBS and a not in jobs) == []

    disagree = {a: d for a, d in sorted(by_action.items()) if len(set(d.values())) > 1}
    assert disagree == {}, "one dry_run default per action on every entry point"
    # where the API has the action, the others follow it (checked above); the case:
    assert by_action["remove_orphan_files"] and set(by_action["remove_orphan_files"].values()) == {True}
    print(json.dumps({a: next(iter(d.values())) for a, d in sorted(by_action.items())}, indent=1))


def test_a_dag_run_started_from_the_form_as_it_opens_is_a_dry_run(airflow_side: dict[str, Any]) -> None:
    """Every DAG with a ``dry_run`` or ``mode`` Param previews by default (``dry_run`` true;
    ``mode`` plan, or empty where the Param says it means plan when triggered by hand), whatever
    the actions its tasks run."""
    dags = [d for d in airflow_side["dags"] if d["params"]]
    assert len(dags) >= 8
    wrong = {}
    for dag in dags:
        for name, param in dag["params"].items():
            default = param["default"]
            if name == "dry_run":
                ok = default is True
            else:
                ok = default == "plan" or (default is None and "plan when triggered by hand" in param["description"])
            if not ok:
                wrong[f"{dag['dag_id']}.{name}"] = default
    assert wrong == {}
    # the DAGs' tasks run declared actions (a DAG of an operator without `actions` is caught above)
    assert [d["dag_id"] for d in dags if not d["actions"]] == []
