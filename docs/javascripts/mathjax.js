// MathJax 3 configuration for pymdownx.arithmatex (generic mode) and the notebooks' markdown cells.
// MathJax itself is served from this site (assets/mathjax/, copied by docs/site_hooks.py): no CDN.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"], ["$", "$"]],
    displayMath: [["\\[", "\\]"], ["$$", "$$"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    // Typeset only the math that markdown marked as such (arithmatex) and notebook markdown cells:
    // every element with a class is skipped (the page's containers, so docstring text with a dollar
    // sign stays text) unless processHtmlClass names it; class-less children of a processed element
    // (the <p> of a notebook's markdown cell) stay processed.
    ignoreHtmlClass: ".+",
    processHtmlClass: "arithmatex|jp-RenderedMarkdown|jp-MarkdownOutput",
  },
};

// mkdocs-material's instant navigation swaps pages without reloading: typeset each new page.
if (typeof document$ !== "undefined") {
  document$.subscribe(() => {
    if (window.MathJax && MathJax.typesetPromise) {
      MathJax.startup.output.clearCache();
      MathJax.typesetClear();
      MathJax.texReset();
      MathJax.typesetPromise();
    }
  });
}
