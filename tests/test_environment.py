"""Binder cannot drift from CI: environment.yml, pyproject.toml and the lock agree."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CONDA_TO_PYPI = {"pytorch-cpu": "torch", "jupyter-book": "jupyter-book"}
NOT_PACKAGES = {"python", "pip"}


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def req_name(req: str) -> str:
    return norm(re.split(r"[\s<>=!~\[;@]", req.strip(), maxsplit=1)[0])


def pyproject_names() -> set[str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = meta["optional-dependencies"]
    reqs = (
        meta["dependencies"] + extras["lab"] + extras["book"] + extras["test"]
    )
    return {req_name(r) for r in reqs}


def environment_names() -> set[str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    names = set()
    for dep in env["dependencies"]:
        items = dep["pip"] if isinstance(dep, dict) else [dep]
        for item in items:
            name = req_name(item)
            names.add(norm(CONDA_TO_PYPI.get(name, name)))
    return names - NOT_PACKAGES


def lock_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            pins[norm(name)] = version.strip()
    return pins


def test_environment_and_pyproject_name_the_same_packages():
    assert environment_names() == pyproject_names()


def test_lock_pins_every_declared_package():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = pyproject_names() | {
        req_name(r) for r in meta["optional-dependencies"]["dev"]
    }
    missing = declared - set(lock_pins())
    assert not missing, f"not pinned in constraints.txt: {sorted(missing)}"


def test_torch_is_the_cpu_pin_everywhere():
    assert lock_pins()["torch"] == "2.13.0"
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "torch==2.13.0" in meta["dependencies"]
    env = (ROOT / "environment.yml").read_text()
    assert "pytorch-cpu" in env and "cuda" not in env.lower()


def test_jupyter_book_stays_below_2():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "jupyter-book>=1.0.4,<2" in meta["optional-dependencies"]["book"]
    assert lock_pins()["jupyter-book"].startswith("1.")
