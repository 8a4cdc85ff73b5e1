"""Where the book's checkout is, and its lessons."""

from pathlib import Path


def repo_root() -> Path | None:
    """The book's checkout: the folder with ``_config.yml``, ``notebooks``."""
    for start in (Path.cwd(), Path(__file__).resolve()):
        for folder in (start, *start.parents):
            book = (folder / "_config.yml").is_file()
            if book and (folder / "notebooks").is_dir():
                return folder
    return None


def notebooks(root: Path) -> list[Path]:
    """Every lesson ``*.ipynb`` under ``root/notebooks``, hidden ones aside."""
    base = Path(root) / "notebooks"
    if not base.is_dir():
        return []
    return sorted(
        p
        for p in base.rglob("*.ipynb")
        if not any(part.startswith(".") for part in p.relative_to(base).parts)
    )
