"""Packages whose public names are imported from their modules at first use (pal.lazy)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_each_name_is_its_modules_object_and_an_unknown_name_is_an_attribute_error():
    import pal.alerts
    import pal.alerts.policy
    import pal.parse
    import pal.parse.paths

    assert pal.alerts.exit_code_for is pal.alerts.policy.exit_code_for
    assert pal.parse.job_build_from_path is pal.parse.paths.job_build_from_path
    for package in (pal.alerts, pal.parse):
        assert set(package.__all__) == set(package._HOME)
        with pytest.raises(AttributeError, match="has no attribute 'nope'"):
            package.nope  # noqa: B018


def test_a_module_of_the_package_does_not_import_the_others():
    code = ("import sys\nimport pal.parse.archive, pal.alerts.acks\n"
            "print(*sorted(m for m in ('pal.parse.build', 'pal.alerts.build', 'lxml', 'pandas') if m in sys.modules))\n"
            "from pal.parse import parse_build\nfrom pal.alerts import build_alerts\n"
            "print(parse_build.__module__, build_alerts.__module__)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["", "pal.parse.inputs pal.alerts.build"]
