"""A fake Jenkins (and log server) over real HTTP on 127.0.0.1, with programmable faults.

See ``tests.fakejenkins.server`` for the API: ``FakeJenkins``, ``Fault``, ``Request``.
"""

from tests.fakejenkins.server import FakeBuild, FakeJenkins, Fault, Request

__all__ = ["FakeBuild", "FakeJenkins", "Fault", "Request"]
