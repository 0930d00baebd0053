"""mkdocs hooks: the figures in paper_figures/ (outside docs/) become part of the site.

docs/figures.md links them as ``../paper_figures/X.png`` so that they also show on GitHub; the site
serves them under ``paper_figures/`` and the links are rewritten to match.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]


def on_files(files, config):
    for png in sorted((ROOT / "paper_figures").glob("*.png")):
        files.append(File(f"paper_figures/{png.name}", src_dir=str(ROOT), dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))
    return files


def on_page_markdown(markdown, page, config, files):
    return markdown.replace("](../paper_figures/", "](paper_figures/")
