"""Binder cannot drift from CI: environment.yml, pyproject.toml and the lock agree."""

import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

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


def environment_specs() -> dict[str, SpecifierSet]:
    """The version ranges environment.yml gives (conda's ``name>=x`` and
    ``name=x``; its pip section as pip reads it)."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    specs = {}
    for dep in env["dependencies"]:
        for item in dep["pip"] if isinstance(dep, dict) else [dep]:
            name = req_name(item)
            spec = item.strip()[len(name) :].strip()
            spec = re.sub(r"^=(?!=)", "==", spec)  # conda's name=x
            specs[norm(CONDA_TO_PYPI.get(name, name))] = SpecifierSet(spec)
    return specs


def environment_names() -> set[str]:
    return set(environment_specs()) - NOT_PACKAGES


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


def declared() -> dict[str, list[Requirement]]:
    """Every requirement of pyproject.toml (dependencies and extras), by name."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = meta["dependencies"] + [
        r for extra in meta["optional-dependencies"].values() for r in extra
    ]
    out: dict[str, list[Requirement]] = {}
    for r in map(Requirement, reqs):
        out.setdefault(norm(r.name), []).append(r)
    return out


def test_the_lock_satisfies_every_declared_range():
    """The lock pins versions pyproject.toml allows (torch's exact pin too)."""
    pins = lock_pins()
    for name, reqs in declared().items():
        for req in reqs:
            assert req.specifier.contains(pins[name], prereleases=True), (
                f"constraints.txt pins {name}=={pins[name]}, outside {req}"
            )


def test_binder_admits_the_locked_versions():
    """environment.yml's ranges contain the lock's versions (torch as
    pytorch-cpu, which must be the CPU build)."""
    pins = lock_pins()
    for name, spec in environment_specs().items():
        if name in NOT_PACKAGES:
            continue
        assert spec.contains(pins[name], prereleases=True), (
            f"environment.yml allows {name}{spec}, the lock pins {pins[name]}"
        )
    env = (ROOT / "environment.yml").read_text()
    assert "pytorch-cpu" in env and "cuda" not in env.lower()


def test_the_book_stays_on_jupyter_book_1():
    """The book is a jupyter-book 1 project (_config.yml + _toc.yml), which
    jupyter-book 2 does not build: every range of it must exclude 2."""
    assert (ROOT / "_toc.yml").is_file() and (ROOT / "_config.yml").is_file()
    ranges = [r.specifier for r in declared()["jupyter-book"]]
    ranges.append(environment_specs()["jupyter-book"])
    for spec in ranges:
        assert not spec.contains("2.0.0"), spec
