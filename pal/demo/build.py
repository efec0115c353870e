"""One build's output.xml: the suite tree CSIT produces, written as text into a stream.

Layout: ``Tests > Vpp > Perf > <Area> > <suite>``; the Perf suite setup holds the TG
message (under ``Setup Framework``) and the DUT version (under ``Show Vpp Version On All
Duts``); each test has a setup keyword, its tags and the status message with the results.
Static parts of every test are rendered once per job and reused for each build.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from pal.demo.catalog import JobProfile, TestDef, long_name, suite_display_name
from pal.demo.history import JobPlan, JobValues, rng_for
from pal.demo.messages import failure_message, mrr_message, ndrpdr_message, ndrpdr_message_v7
from pal.demo.rfxml import Dialect, attr, us_of

if TYPE_CHECKING:
    from pal.demo.uti import ResultSink

_FLUSH = 1 << 20  # characters buffered before they go to the compressor
_T = "\x00T\x00"  # timestamp placeholder in pre-rendered keyword trees


@dataclass(frozen=True)
class BuildFacts:
    passed: int
    failed: int
    start_us: int
    end_us: int  # top suite end: the build time


@dataclass(frozen=True)
class _Static:
    """The parts of a test that do not change from build to build."""

    head: str  # after '<test id="..."': name and line
    tags: str
    long_name: str


def _area_dir(area: str) -> str:
    return area.lower().replace(" ", "_")


class JobWriter:
    """Writes the builds of one job in one dialect."""

    def __init__(self, seed: int, plan: JobPlan, values: JobValues, dialect: Dialect, keyword_depth: int = 0,
                 mlrsearch_v7_from: int | None = None):
        self.seed = seed
        self.v7_from = mlrsearch_v7_from  # first run whose NDRPDR messages are MLRsearch v7's (None: never)
        self.plan = plan
        self.values = values
        self.d = dialect
        self.profile: JobProfile = plan.profile
        self.root_source = f"/w/workspace/{self.profile.name}/csit/tests"
        self.layouts: dict[bool, list[tuple[str, list[tuple[str, list[int]]]]]] = {}
        self.static: dict[tuple[int, bool], _Static] = {}
        for renamed in (False, True):
            self.layouts[renamed] = self._layout(renamed)
        self.tree = self._keyword_tree(keyword_depth) if keyword_depth > 0 else ""
        self.setup_open = dialect.kw_open("Setup Test", "default", setup=True)

    # -- static parts -------------------------------------------------------------------

    def _names(self, tst: TestDef, new: bool) -> tuple[str, str, tuple[str, ...]]:
        old = None if new else tst.renamed_from()
        return old if old is not None else (tst.suite_file, tst.name, tst.tags)

    def _layout(self, new: bool) -> list[tuple[str, list[tuple[str, list[int]]]]]:
        """Areas sorted by folder, suites by file name (the order RF runs a directory in)."""
        areas: dict[str, dict[str, list[int]]] = {}
        for tst in self.plan.tests:
            suite_file, name, tags = self._names(tst, new)
            areas.setdefault(tst.area, {}).setdefault(suite_file, []).append(tst.slot)
            line = 60 + 12 * (len(areas[tst.area][suite_file]) - 1)
            self.static[(tst.slot, new)] = _Static(
                head=f' name="{attr(name)}" line="{line}">\n',
                tags=self.d.tags(tags),
                long_name=long_name(self.profile, tst.area, suite_file, name),
            )
        return [(a, sorted(areas[a].items())) for a in sorted(areas, key=_area_dir)]

    def _keyword_tree(self, depth: int) -> str:
        """A binary tree of keywords ``depth`` deep with TRACE/INFO messages, like a TRACE log."""
        d = self.d
        names = ("Send Traffic On Tg", "Vpp Show Errors", "Execute Script", "Get Interface Stats",
                 "Set Interface State", "Run Command Over Ssh")
        dut = self.profile.dut_ips(self.profile.tg_ips[0])[0]

        def node(level: int, k: int) -> str:
            name = names[(level + k) % len(names)]
            args = (f"node={{'host': '{dut}', 'port': 22, 'type': 'DUT'}}", f"cmd=show runtime {k}")
            body = [d.time_placeholder_msg("TRACE", f"Arguments: [ {' | '.join(args)} ]", _T)]
            if level < depth:
                body += [node(level + 1, 2 * k), node(level + 1, 2 * k + 1)]
            else:
                body.append(d.time_placeholder_msg(
                    "INFO", f"Command 'vppctl show runtime' on {dut} returned 0: vector rates in 1.2e7, out 1.2e7", _T))
            body.append(d.time_placeholder_msg("TRACE", "Return: None", _T))
            a = d.kw_args(args)
            inner = a + "".join(body) if d.args_before_body() else "".join(body) + a
            return d.kw_open(name, "ssh") + inner + d.placeholder_status(_T) + "</kw>\n"

        return node(1, 0)

    # -- one build ----------------------------------------------------------------------

    def write(self, run: int, out: BinaryIO, sink: "ResultSink | None" = None) -> BuildFacts:
        """Write run ``run``'s output.xml (UTF-8) to ``out``; return its pass/fail counts and times.

        ``sink`` (pal.demo.uti) is told every test and suite with its times as written, to write
        the same build as UTI JSON.
        """
        d, plan, prof = self.d, self.plan, self.profile
        new = plan.rename_from is not None and run >= plan.rename_from
        rng = rng_for(self.seed, "times", prof.name, str(plan.builds[run]))
        n_tests = len(plan.tests)
        failed_mask = plan.fail[run] >= 0
        if prof.test_type == "MRR":
            dur = rng.uniform(42.0, 78.0, n_tests)
        else:
            dur = rng.uniform(170.0, 420.0, n_tests)
        dur = np.where(failed_mask, dur * 0.3, dur)
        dur_us = (dur * 1e6).astype(np.int64).tolist()
        setup_us = (dur * 2e4).astype(np.int64).tolist()
        messages = self._messages(run)
        tg = plan.tg_ips[run]
        duts = prof.dut_ips(tg)

        start = us_of(plan.starts[run])
        buf: list[str] = []
        size = 0

        def emit(s: str) -> None:
            nonlocal size
            buf.append(s)
            size += len(s)
            if size > _FLUSH:
                out.write("".join(buf).encode("utf-8"))
                buf.clear()
                size = 0

        # A suite's status follows its children (as RF writes it), so its end time is known.
        src = self.root_source
        emit(d.root(start))
        top_start = start + 400_000
        emit(f'<suite id="s1" name="Tests" source="{src}">\n')
        emit(f'<suite id="s1-s1" name="Vpp" source="{src}/vpp">\n')
        emit(f'<suite id="s1-s1-s1" name="Perf" source="{src}/vpp/perf">\n')
        cursor = top_start + 2_000_000
        cursor = self._perf_setup(emit, cursor, tg, duts, plan.versions[run], int(rng.integers(300, 700)))
        stats: list[tuple[str, str, str, int, int]] = []
        total_pass = total_fail = 0
        for a_i, (area, suites) in enumerate(self.layouts[new], start=1):
            a_id = f"s1-s1-s1-s{a_i}"
            a_start = cursor
            a_pass = a_fail = 0
            emit(f'<suite id="{a_id}" name="{attr(area)}" source="{src}/vpp/perf/{_area_dir(area)}">\n')
            for s_i, (suite_file, slots) in enumerate(suites, start=1):
                s_id = f"{a_id}-s{s_i}"
                s_start = cursor
                cursor += 15_000_000  # suite setup: topology, interfaces
                s_pass = s_fail = 0
                emit(f'<suite id="{s_id}" name="{attr(suite_display_name(suite_file))}" '
                     f'source="{src}/vpp/perf/{_area_dir(area)}/{suite_file}.robot">\n')
                for t_i, slot in enumerate(slots, start=1):
                    st = self.static[(slot, new)]
                    t_start = cursor
                    t_end = t_start + dur_us[slot]
                    fail = bool(failed_mask[slot])
                    parts = [f'<test id="{s_id}-t{t_i}"', st.head,
                             self.setup_open,
                             d.msg(t_start + 1000, "INFO", f"Worker cores on DUT1 {duts[0]}: {2 + slot % 8}"),
                             d.status("PASS", t_start, t_start + setup_us[slot]), "</kw>\n"]
                    if self.tree:
                        parts.append(self.tree.replace(_T, d.stamp(t_start + setup_us[slot])))
                    parts += [st.tags, d.status("FAIL" if fail else "PASS", t_start, t_end, messages[slot]),
                              "</test>\n"]
                    emit("".join(parts))
                    if sink is not None:
                        sink.test(run, slot, st.long_name, self._names(self.plan.tests[slot], new)[2],
                                  messages[slot] if fail else "", t_start, t_end)
                    cursor = t_end + 1_000_000
                    if fail:
                        s_fail += 1
                    else:
                        s_pass += 1
                cursor += 5_000_000
                emit(d.suite_status("FAIL" if s_fail else "PASS", s_start, cursor))
                emit("</suite>\n")
                if sink is not None:
                    sink.suite(f"Tests.Vpp.Perf.{area}.{suite_display_name(suite_file)}", s_start, cursor)
                stats.append((s_id, suite_display_name(suite_file),
                              f"Tests.Vpp.Perf.{area}.{suite_display_name(suite_file)}", s_pass, s_fail))
                a_pass += s_pass
                a_fail += s_fail
            cursor += 1_000_000
            emit(d.suite_status("FAIL" if a_fail else "PASS", a_start, cursor))
            emit("</suite>\n")
            if sink is not None:
                sink.suite(f"Tests.Vpp.Perf.{area}", a_start, cursor)
            stats.append((a_id, area, f"Tests.Vpp.Perf.{area}", a_pass, a_fail))
            total_pass += a_pass
            total_fail += a_fail
        status = "FAIL" if total_fail else "PASS"
        for name, suite_start in (("Tests.Vpp.Perf", top_start + 1_000_000), ("Tests.Vpp", top_start + 500_000),
                                  ("Tests", top_start)):
            cursor += 1_000_000
            emit(d.suite_status(status, suite_start, cursor))
            emit("</suite>\n")
            if sink is not None:
                sink.suite(name, suite_start, cursor)
        stats = [("s1", "Tests", "Tests", total_pass, total_fail), ("s1-s1", "Vpp", "Tests.Vpp", total_pass, total_fail),
                 ("s1-s1-s1", "Perf", "Tests.Vpp.Perf", total_pass, total_fail), *stats]
        emit(d.statistics(total_pass, total_fail, stats))
        out.write("".join(buf).encode("utf-8"))
        return BuildFacts(total_pass, total_fail, top_start, cursor)

    def _perf_setup(self, emit, t: int, tg: str, duts: list[str], version: str, secs: int) -> int:
        """The Perf suite setup: framework setup per node, then the VPP version per DUT."""
        d = self.d
        end = t + secs * 1_000_000
        fw = [d.msg(t + 5_000_000, "INFO", f"Setup of node TG host {tg}, port 22 done.")]
        fw += [d.msg(t + (6 + i) * 1_000_000, "INFO", f"Setup of node DUT host {ip}, port 22 done.")
               for i, ip in enumerate(duts)]
        show_start = end - 3_000_000
        ver = [d.msg(show_start + 500_000 * (i + 1), "INFO", f"VPP version: {version}") for i in range(len(duts))]
        args = d.kw_args(("Setup Framework", "${nodes}", "AND", "Show Vpp Version On All Duts", "${nodes}"))
        fw_args = d.kw_args(("${nodes}",))
        setup_fw = (d.kw_open("Setup Framework", "SetupFramework")
                    + (fw_args + "".join(fw) if d.args_before_body() else "".join(fw) + fw_args)
                    + d.status("PASS", t + 1_000_000, show_start - 1_000_000) + "</kw>\n")
        show = (d.kw_open("Show Vpp Version On All Duts", "VppUtil")
                + (fw_args + "".join(ver) if d.args_before_body() else "".join(ver) + fw_args)
                + d.status("PASS", show_start, end - 200_000) + "</kw>\n")
        body = setup_fw + show
        emit(d.kw_open("Run Keywords", "BuiltIn", setup=True)
             + (args + body if d.args_before_body() else body + args)
             + d.status("PASS", t, end) + "</kw>\n")
        return end + 1_000_000

    def _messages(self, run: int) -> list[str]:
        """The status message of every test of this run (results, or the failure)."""
        plan, v = self.plan, self.values
        tg = plan.tg_ips[run]
        dut = self.profile.dut_ips(tg)[0]
        out: list[str] = []
        fails = plan.fail[run].tolist()
        if v.trials is not None:
            rows = v.trials[run].tolist()
            for slot, trials in enumerate(rows):
                out.append(mrr_message(trials) if fails[slot] < 0 else failure_message(fails[slot], tg, dut))
            return out
        ndr, pdr = v.ndr[run].tolist(), v.pdr[run].tolist()
        d1, d2 = v.lat_d1[run].tolist(), v.lat_d2[run].tolist()
        for slot, tst in enumerate(plan.tests):
            if fails[slot] >= 0:
                out.append(failure_message(fails[slot], tg, dut))
            else:
                make = ndrpdr_message_v7 if self.v7_from is not None and run >= self.v7_from else ndrpdr_message
                out.append(make(ndr[slot], pdr[slot], d1[slot], d2[slot], tst.frame, key=slot))
        return out


def test_long_names(writer: JobWriter, new: bool) -> dict[int, tuple[str, tuple[str, ...]]]:
    """slot -> (long name, tags) for the old (``new=False``) or new names."""
    return {tst.slot: (writer.static[(tst.slot, new)].long_name, writer._names(tst, new)[2])
            for tst in writer.plan.tests}

