"""Markdown record checkers and commit-trailer checks, importable without the rest of fidelity.

- `tree`: `check-docs` over a tree: the root and its configuration, the pages, the check
- `discover`: which files to check, where the repository root is, how to name them
- `config`: `[tool.fidelity.docs]`: defaults for every Markdown file, then per page
- `schema`: JSON Schemas shipped inside a package, violations located by JSON path
- `check`: every rule over one page, and over a set of pages with their ratchets
- `cache`: per-page results kept between runs (time only, never a verdict)
- `markdown`: the one markdown-it-py parser: CommonMark plus GFM tables
- `frontmatter`: YAML or TOML front matter at the top of a page, blanked before parsing
- `positions`: source positions of offsets inside a token's content
- `directives`: inline silencing: HTML comments that turn findings off
- `fences`: code blocks as CommonMark pairs them, and the unclosed fences
- `headings`: no per-attempt diary headings; optional canonical sections
- `prose`: prose paragraphs: caps on each one and a budget per page
- `tables`: GFM tables of a Markdown text, as written in the source
- `rows`: caps on each table entry: a row's source length and each cell
- `keyed`: keyed tables: one row per key, every row as wide as the header
- `links`: links and images of a page, located in the source
- `linkcheck`: where a link lands, the way GitHub resolves it, and whether it lands
- `slugs`: anchors a `#fragment` can land on, as GitHub renders a Markdown file
- `refs`: undefined references (`[text][label]`, `[^note]`)
- `footnotes`: GitHub footnotes: references and definitions
- `site`: the files a page and its links point into, read once, never outside the root
- `ratchets`: per-page counts of tolerated findings that may only go down
- `trailers`: commit-trailer rules, pure over trailers git parsed and a repository probe
- `findings`: a located, coded finding; codes are stable
- `report`: one `path:line:col: CODE message` line per finding, or JSON
- `errors`: the checkers' own errors (the CLI maps them to exit codes 2 and 3)
"""
