"""The documentation site: `mkdocs.yml` builds docs/ into a site, and a broken link fails the build.

The build is the real MkDocs of the environment, as `make docs` runs it. The planted breakages prove that the gate
can fail; they are built without `--strict`, so that it is `mkdocs.yml` itself (strict, with link and anchor
validation) that fails them, not a flag a caller might forget.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MKDOCS = Path(sys.executable).parent / "mkdocs"
BUILD_TIMEOUT_S = 120


def build_site(config: Path, site: Path, *flags: str) -> subprocess.CompletedProcess:
    if not MKDOCS.exists():
        pytest.fail(f"{MKDOCS} is missing: the docs site needs MkDocs (pip install -e '.[dev]')")
    return subprocess.run(
        [str(MKDOCS), "build", *flags, "--config-file", str(config), "--site-dir", str(site)],
        cwd=config.parent,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
    )


def page_path(site: Path, page: Path) -> Path:
    """Where a page of docs/ lands in the site (`use_directory_urls: false`: targets.md -> targets.html)."""
    return site / page.relative_to(DOCS).with_suffix(".html")


def test_the_site_builds_strictly_with_every_page_of_docs(tmp_path):
    site = tmp_path / "site"
    build = build_site(ROOT / "mkdocs.yml", site, "--strict")
    assert build.returncode == 0, build.stderr
    pages = sorted(DOCS.rglob("*.md"))
    assert pages, "docs/ has no pages"
    missing = [str(page.relative_to(DOCS)) for page in pages if not page_path(site, page).is_file()]
    assert not missing, f"pages of docs/ not in the site: {missing}"


# One build with every kind of breakage planted, a page each: each must be a warning (which strict makes fatal)
# naming its link, so a validation switched off, or left at MkDocs' default level, fails the test.
PLANTED = {
    "targets.md": ("[a page that is not there](no-such-page.md)", "no-such-page.md"),
    "settling.md": ("[an anchor that is not there](verdicts.md#no-such-heading)", "#no-such-heading"),
    "fuzzing.md": ("[a source file](../rstck/no_such_module.py)", "../rstck/no_such_module.py"),
    "reports.md": ("[a folder of the repository](../no_such_folder/)", "../no_such_folder/"),
    "pytest.md": ("[an absolute link](/no-such-page.md)", "/no-such-page.md"),
}


def test_broken_links_fail_the_build_each_named(tmp_path):
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(DOCS, tmp_path / "docs")
    for page, (link, _) in PLANTED.items():
        with open(tmp_path / "docs" / page, "a", encoding="utf-8") as broken:
            broken.write(f"\n\nPlanted: {link}.\n")
    build = build_site(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert build.returncode != 0, f"a build with broken links succeeded:\n{build.stderr}"
    unnamed = [
        f"{page}: {named}"
        for page, (_, named) in PLANTED.items()
        if not any(line.startswith("WARNING") and page in line and named in line for line in build.stderr.splitlines())
    ]
    assert not unnamed, f"broken links the build did not name: {unnamed}\n{build.stderr}"
