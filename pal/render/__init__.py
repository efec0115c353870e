"""Render stage: the static trending site (dashboards, trend graphs, drill-downs, statistics)."""

from pal.render.site import page_content, page_digests, render_site, site_texts

__all__ = ["page_content", "page_digests", "render_site", "site_texts"]
