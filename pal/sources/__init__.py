"""The download stage: output.xml files of the selected builds from ordered data sources.

``fetch_builds(spec, cache_dir, report, jobs=None) -> list[BuildFile]``; see pal.sources.fetch.
"""

from pal.sources.fetch import default_cache_dir, fetch_builds

__all__ = ["default_cache_dir", "fetch_builds"]
