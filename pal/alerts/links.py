"""Links to Jenkins builds in alerts, from ``spec.outputs.build_url`` ({jenkins} {job} {build})."""

from __future__ import annotations

from dataclasses import dataclass

from pal.model import SeriesKey
from pal.spec import Spec


@dataclass(frozen=True)
class Links:
    template: str | None = None
    jenkins: str = ""  # the first Jenkins source's URL, for {jenkins}
    site: str | None = None  # where site/ is published (outputs.site-url)

    @classmethod
    def from_spec(cls, spec: Spec) -> "Links":
        jenkins = next((s.url or "" for s in spec.sources if s.type == "jenkins"), "")
        site = spec.outputs.site_url.rstrip("/") if spec.outputs.site_url else None
        return cls(spec.outputs.build_url, jenkins.rstrip("/"), site)

    def series(self, key: SeriesKey) -> str | None:
        """The series' drill-down page on the published site, or None without ``outputs.site-url``."""
        return f"{self.site}/s/{key.slug()}.html" if self.site else None

    def build(self, job: str, build: int | None) -> str | None:
        """The build's URL, or None without a template (or a build)."""
        if not self.template or build is None:
            return None
        return self.template.format_map({"jenkins": self.jenkins, "job": job, "build": int(build)})

    def job_build(self, job: str, build: int | None) -> str:
        """The URL when there is one, else ``<job>/<build>`` (mails always name the build)."""
        return self.build(job, build) or f"{job}/{build if build is not None else '?'}"
