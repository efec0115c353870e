"""Fixtures for the download stage: tiny output.xml files, a spec builder and a fake Jenkins."""

from __future__ import annotations

import dataclasses
import gzip
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import pytest
import yaml

from pal.spec import Spec, parse_spec
from tests.fakejenkins import FakeJenkins

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"
T0 = datetime(2024, 3, 1, tzinfo=timezone.utc)


def output_xml(job: str, build: int) -> bytes:
    """A tiny but complete Robot Framework output.xml naming its job and build."""
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<robot generated="2024-03-01T00:00:00" '
            f'schemaversion="5"><suite id="s1" name="Tests" source="{job}#{build}">'
            f'<status status="PASS" start="2024-03-01T00:00:00" elapsed="1.0"/></suite></robot>\n').encode()


def output_gz(job: str, build: int) -> bytes:
    return gzip.compress(output_xml(job, build), mtime=0)


def make_spec(tmp: Path, sources: list[dict], jobs: list[dict] | None = None) -> Spec:
    """A valid spec with these sources (and one job by default), based in ``tmp``."""
    data = {
        "name": "t",
        "jobs": jobs or [{"name": JOB}],
        "sources": sources,
        "test-sets": [{"name": "mrr", "metrics": ["mrr"]}],
    }
    return parse_spec(yaml.safe_dump(data), base_dir=str(tmp))


def jenkins_source(url: str, templates: list[str] | None = None, name: str = "jenkins", **kw) -> dict:
    src = {"name": name, "type": "jenkins", "url": url, "timeout": 2, "retries": 2, "workers": 2,
           "artifacts": templates or ["{jenkins}/job/{job}/{build}/artifact/output.xml.gz"]}
    src.update(kw)
    return src


def add_builds(fj: FakeJenkins, job: str, numbers: range | list[int], *, files: Callable[[int], dict] | None = None,
               t0: datetime = T0) -> None:
    """Builds with output.xml.gz artifacts, one a day from ``t0``."""
    for n in numbers:
        fj.add_build(job, n, timestamp=t0 + timedelta(days=n),
                     files=files(n) if files else {"output.xml.gz": output_gz(job, n)})


@pytest.fixture
def fake() -> FakeJenkins:
    with FakeJenkins() as fj:
        yield fj


def with_timeout(spec: Spec, seconds: float) -> Spec:
    """The spec with every source's timeout set to ``seconds`` (below the spec's 1 s minimum, for fast tests)."""
    return dataclasses.replace(spec, sources=[dataclasses.replace(s, timeout=seconds) for s in spec.sources])
