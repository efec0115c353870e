"""Render stage: the static trending site (dashboards, trend graphs, drill-downs, statistics)."""

from pal.render.site import render_site

__all__ = ["render_site"]
