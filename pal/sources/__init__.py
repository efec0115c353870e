"""The download stage: output.xml files of the selected builds from ordered data sources.

``fetch_builds(spec, cache_dir, report, jobs=None) -> list[BuildFile]``; see pal.sources.fetch.
"""

from pal.sources.fetch import fetch_builds

__all__ = ["fetch_builds"]
