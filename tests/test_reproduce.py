"""The reproduction command: resuming, profiles, provenance, and the committed results' consistency.

The toy stage below counts its computations, so resuming is checked by what was *not*
recomputed. The last tests read the committed ``markeval/results`` and recompute each stage's
check units: a result file that no longer follows from the code fails here.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import nbformat
import pandas as pd
import pytest

import markeval
from markeval import _written

from markeval.reproduce import cli, results, run
from markeval.reproduce.cli import main
from markeval.reproduce.stage import COMPARISON_COLUMNS, Stage, settings_key
from markeval.reproduce.stages import all_stages, get_stage
from markeval.reproduce.store import UnitStore
from markeval.cache import NotOursError
from conftest import REPO

RESULTS = Path(__file__).resolve().parents[1] / "markeval" / "results"
calls: list[str] = []
interrupt_at: list[str] = []  # units at which the toy stage is "interrupted"


def _compute(unit, settings):
    calls.append(unit)
    if unit in interrupt_at:
        raise KeyboardInterrupt  # the user pressed Ctrl-C in the middle of the stage
    x = float(ord(unit)) / settings["scale"]
    return pd.DataFrame({"metric": ["m", "n"], "size": [1, 2], "k": [float("nan"), 3.0],
                         "options": ["", "o"], "value": [x / 3, x / 7]})


def _toy():
    return Stage(
        name="toy", title="toy stage",
        settings=lambda p: {"scale": 10 if p == "ci" else 100},
        units=lambda s: ["a", "b", "c", "d"], compute=_compute,
        compare=lambda rows, s: pd.DataFrame([{
            "paper": "MoverScore", "table": "Table 2", "row": "ROUGE-2",
            "column": "TAC-2009 / Pyramid / r", "paper_value": 0.803,
            "our_value": rows["value"].mean(), "setting": f"scale {s['scale']}"}]),
        check_units=lambda s: ["b"])


@pytest.fixture
def toy(tmp_path, monkeypatch):
    calls.clear()
    interrupt_at.clear()
    monkeypatch.setattr(run, "all_stages", lambda: {"toy": _toy()})
    monkeypatch.setattr(results, "get_stage", lambda name: _toy())
    monkeypatch.setenv("MARKEVAL_RESULTS", str(tmp_path / "out"))
    return tmp_path


def test_an_interrupted_stage_resumes_and_gives_the_uninterrupted_rows(toy):
    out, cache = toy / "out", toy / "cache"
    interrupt_at.append("c")
    with pytest.raises(KeyboardInterrupt):
        run.run_stage(_toy(), "ci", out, cache_root=cache, progress=False)
    assert calls == ["a", "b", "c"] and not (out / "toy.csv").exists()
    calls.clear()
    interrupt_at.clear()
    resumed = run.run_stage(_toy(), "ci", out, cache_root=cache, progress=False)
    assert calls == ["c", "d"] and (resumed.computed, resumed.reused) == (2, 2)
    once = run.run_stage(_toy(), "ci", toy / "once", cache_root=toy / "cache2", progress=False)
    assert once.computed == 4
    pd.testing.assert_frame_equal(run.read_rows(out, "toy"), run.read_rows(toy / "once", "toy"))


def test_fresh_recomputes_and_settings_key_the_cache(toy):
    out, cache = toy / "out", toy / "cache"
    run.run_stage(_toy(), "ci", out, cache_root=cache, progress=False)
    calls.clear()
    run.run_stage(_toy(), "full", out, cache_root=cache, progress=False)  # other settings
    assert calls == ["a", "b", "c", "d"]
    calls.clear()
    assert run.run_stage(_toy(), "ci", out, cache_root=cache, fresh=True, progress=False).computed == 4


def test_fresh_deletes_only_the_units_markeval_wrote(toy, capsys, monkeypatch):
    """Before, --fresh deleted every *.csv of the unit folder, a user's notes included."""
    monkeypatch.setenv("MARKEVAL_CACHE", str(toy / "markeval-cache"))
    out, cache = toy / "out", toy / "markeval-cache" / "reproduce"  # the command's own store
    run.run_stage(_toy(), "ci", out, cache_root=cache, progress=False)
    store = UnitStore(_toy(), "ci", _toy().settings_for("ci"), root=cache)
    (store.folder / "my-notes.csv").write_text("mine")
    (store.folder / "a.csv").write_text((store.folder / "a.csv").read_text() + "# edited\n")
    calls.clear()
    with pytest.raises(NotOursError, match=r"a.csv: not written by markeval, or changed since; "
                                           r"left as it is \(move them away to compute their "
                                           r"units afresh\)"):
        run.run_stage(_toy(), "ci", out, cache_root=cache, fresh=True, progress=False)
    assert calls == [] and (store.folder / "b.csv").exists()  # nothing deleted, nothing run
    (store.folder / "a.csv").unlink()  # the user moves their edited copy away
    done = run.run_stage(_toy(), "ci", out, cache_root=cache, fresh=True, progress=False)
    assert done.computed == 4 and done.kept == (store.folder / "my-notes.csv",)
    assert (store.folder / "my-notes.csv").read_text() == "mine"
    monkeypatch.setattr(cli, "all_stages", lambda: {"toy": _toy()})
    assert main(["--stage", "toy", "--profile", "ci", "--fresh"]) == 0
    assert f"--fresh kept 1 files markeval did not write: {store.folder / 'my-notes.csv'}" in \
        capsys.readouterr().out


@pytest.mark.parametrize("name, content", [
    ("paper_comparison.csv", "my own comparison\n"),
    ("provenance.json", "not JSON {"),
    ("timings.csv", "my,timings\n"),
    ("toy.csv", "a user's table without a profile column\n"),
])
def test_out_never_reads_or_replaces_a_file_markeval_did_not_write(toy, capsys, monkeypatch,
                                                                   name, content):
    """Before: overwritten, appended to, JSONDecodeError, KeyError: 'profile'. Now: named,
    before any unit runs; --force replaces it."""
    monkeypatch.setattr(cli, "all_stages", lambda: {"toy": _toy()})
    monkeypatch.setenv("MARKEVAL_CACHE", str(toy / "cache"))
    out = toy / "theirs"
    out.mkdir()
    (out / name).write_text(content)
    argv = ["--stage", "toy", "--profile", "ci", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{out / name}: not written by markeval, or changed since; " \
        "left as it is (move them away, or pass --force to replace them)" in err, err
    assert calls == [] and (out / name).read_text() == content
    assert main([*argv, "--force"]) == 0
    assert f"--force: removed {out / name}" in capsys.readouterr().out
    assert calls == ["a", "b", "c", "d"] and (out / name).read_text() != content
    assert _written.foreign(run.result_paths(out, ["toy"])) == []
    calls.clear()
    assert main(argv) == 0 and calls == []  # its own files: reused, replaced, no --force


def test_the_committed_results_are_recorded_as_markeval_s():
    """`make reproduce` writes into markeval/results without --force only while its manifest
    (committed with the results) matches every file; a hand edit shows here."""
    assert _written.foreign(run.result_paths(RESULTS)) == []
    assert all((RESULTS / name).exists() for name in _written.recorded(RESULTS))


def test_a_parallel_stage_computes_its_units_in_workers_and_gives_the_serial_rows(toy):
    out, cache = toy / "out", toy / "cache"
    prepared = toy / "prepared"
    parallel = dataclasses.replace(_toy(), parallel=True,
                                   prepare=lambda settings: prepared.write_text("once"))
    interrupt_at.append("c")
    with pytest.raises(KeyboardInterrupt):  # serially: a and b are kept
        run.run_stage(parallel, "ci", out, cache_root=cache, progress=False)
    interrupt_at.clear()
    calls.clear()
    assert not prepared.exists()  # serial units need no shared inputs prepared
    resumed = run.run_stage(parallel, "ci", out, cache_root=cache, progress=False, n_jobs=2)
    assert calls == [] and (resumed.computed, resumed.reused) == (2, 2)  # c, d in workers
    assert prepared.read_text() == "once"
    serial = run.run_stage(_toy(), "ci", toy / "serial", cache_root=toy / "cache2",
                           progress=False)
    assert serial.computed == 4
    pd.testing.assert_frame_equal(run.read_rows(out, "toy"), run.read_rows(toy / "serial", "toy"))


def test_units_record_their_own_provenance(toy):
    out, cache = toy / "out", toy / "cache"
    run.run_stage(_toy(), "ci", out, cache_root=cache, progress=False)
    recorded = json.loads((out / "provenance.json").read_text())["toy"]["ci"]
    assert set(recorded["unit_provenance"]) == {"a", "b", "c", "d"}
    for unit in recorded["unit_provenance"].values():
        assert set(unit) == {"commit", "machine", "finished"} and unit["commit"]
    store = UnitStore(_toy(), "ci", _toy().settings_for("ci"), root=cache)
    assert store.provenance("a") == recorded["unit_provenance"]["a"]
    assert store.provenance("zz") == {}


def test_the_costliest_units_are_dispatched_first(toy, monkeypatch):
    dispatched = []

    def record(function, units, **options):
        dispatched.extend(unit[3] for unit in units)
        return [function(*unit) for unit in units]

    import markeval.experiments.parallel as parallel

    monkeypatch.setattr(parallel, "run_units", record)  # in order, in this process
    costly = dataclasses.replace(_toy(), parallel=True,
                                 cost=lambda unit, settings: {"c": 9, "a": 5}.get(unit, 1))
    done = run.run_stage(costly, "ci", toy / "out", cache_root=toy / "cache", progress=False,
                         n_jobs=2)
    assert dispatched == ["c", "a", "b", "d"] and done.computed == 4
    run.run_stage(_toy(), "ci", toy / "serial", cache_root=toy / "cache2", progress=False)
    pd.testing.assert_frame_equal(run.read_rows(toy / "out", "toy"),
                                  run.read_rows(toy / "serial", "toy"))


def test_selection_settings_choose_units_and_keep_the_finished_ones(toy):
    out, cache = toy / "out", toy / "cache"

    def stage(units):
        return dataclasses.replace(_toy(), units=lambda s: s["units"], selection=("units",),
                                   settings=lambda p: {"scale": 10, "units": units})

    run.run_stage(stage(["a", "b"]), "ci", out, cache_root=cache, progress=False)
    calls.clear()
    grown = run.run_stage(stage(["a", "b", "c"]), "ci", out, cache_root=cache, progress=False)
    assert calls == ["c"] and (grown.computed, grown.reused) == (1, 2)


def test_profiles_are_kept_apart_and_the_comparison_is_rebuilt(toy):
    out, cache = toy / "out", toy / "cache"
    run.run_stage(_toy(), "ci", out, cache_root=cache, progress=False)
    assert results.shown_profile("toy") == "ci"  # no full run yet: chapters show the ci rows
    run.run_stage(_toy(), "full", out, cache_root=cache, progress=False)
    assert results.shown_profile("toy") == "full"
    run.run_stage(_toy(), "ci", out, cache_root=cache, progress=False)
    rows = run.read_rows(out, "toy")
    assert rows.groupby("profile").size().to_dict() == {"ci": 8, "full": 8}
    assert list(rows.columns) == ["profile", "unit", "metric", "size", "k", "options", "value"]
    table = run.write_comparison(out)
    assert list(table.columns) == list(COMPARISON_COLUMNS)
    assert sorted(table["profile"]) == ["ci", "full"]
    assert pd.read_csv(out / "paper_comparison.csv")["setting"].tolist() == ["scale 10", "scale 100"]
    provenance = json.loads((out / "provenance.json").read_text())
    for profile in ("ci", "full"):
        entry = provenance["toy"][profile]
        assert entry["units"] == 4 and entry["machine"] and entry["commit"]
        assert entry["settings"]["scale"] in (10, 100)
    computed_at = provenance["toy"]["ci"]["finished"]
    run.run_stage(_toy(), "ci", out, cache_root=cache, progress=False)  # reuses every unit
    again = json.loads((out / "provenance.json").read_text())["toy"]["ci"]
    assert again["finished"] == computed_at and again["units_computed_in_last_run"] == 0
    log = pd.read_csv(out / "timings.csv")
    assert log["stage"].tolist() == ["toy"] * 4 and log["reused"].tolist() == [0, 0, 4, 4]


def test_check_slice_recomputes_and_catches_drift(toy):
    out = toy / "out"
    run.run_stage(_toy(), "ci", out, cache_root=toy / "cache", progress=False)
    run.write_comparison(out)
    check = results.check_slice("toy", "ci")
    assert check["equal"].all() and set(check["unit"]) == {"b"} and len(check) == 2
    assert set(check["column"]) == {"value"}  # K names the metric, a float or not
    rows = run.read_rows(out, "toy")
    rows.loc[(rows["unit"] == "b") & (rows["metric"] == "n"), "value"] += 1e-6
    rows.to_csv(out / "toy.csv", index=False)
    assert results.check_slice("toy", "ci")["equal"].tolist() == [True, False]
    # another unit's 2.5 makes the whole column float in the file: 2.0 still names size 2
    rows["size"] = rows["size"].where(rows["unit"] != "a", 2.5)
    rows.to_csv(out / "toy.csv", index=False)
    assert run.read_rows(out, "toy")["size"].dtype == float
    assert results.check_slice("toy", "ci")["equal"].tolist() == [True, False]
    # an empty text field ("" options) reads back as missing on both sides: the same row;
    # another label is not
    assert run.read_rows(out, "toy")["options"].isna().sum() == 4
    rows.loc[(rows["unit"] == "b") & (rows["metric"] == "m"), "options"] = "p"
    rows.to_csv(out / "toy.csv", index=False)
    with pytest.raises(AssertionError, match="column 'options' differs"):
        results.check_slice("toy", "ci")
    rows.loc[(rows["unit"] == "b") & (rows["metric"] == "m"), "options"] = ""
    rows.loc[(rows["unit"] == "b") & (rows["metric"] == "n"), "k"] = 5.0
    rows.to_csv(out / "toy.csv", index=False)
    with pytest.raises(AssertionError, match="column 'k' differs"):
        results.check_slice("toy", "ci")
    rows.loc[(rows["unit"] == "b") & (rows["metric"] == "n"), "k"] = 3.0
    rows.loc[(rows["unit"] == "b") & (rows["metric"] == "n"), "size"] = 3
    rows.to_csv(out / "toy.csv", index=False)
    with pytest.raises(AssertionError, match="column 'size' differs"):
        results.check_slice("toy", "ci")
    rows[rows["unit"] != "b"].to_csv(out / "toy.csv", index=False)
    with pytest.raises(AssertionError, match="2 recomputed rows .* 0 committed"):
        results.check_slice("toy", "ci")
    with pytest.raises(LookupError, match="no committed 'full' rows for stage 'toy'"):
        results.load_rows("toy", "full")


def _compute_some(unit, settings):
    """The toy's rows, only those of ``settings["metrics"]`` where it names some."""
    rows = _compute(unit, settings)
    return rows[rows["metric"].isin(settings.get("metrics", rows["metric"]))]


def test_check_slice_matches_a_narrowed_unit_to_its_committed_rows(toy, monkeypatch):
    out = toy / "out"
    run.run_stage(_toy(), "ci", out, cache_root=toy / "cache", progress=False)
    narrowed = dataclasses.replace(_toy(), compute=_compute_some,
                                   check_narrowing=lambda s: {"metrics": ["n"]})
    monkeypatch.setattr(results, "get_stage", lambda name: narrowed)
    calls.clear()
    check = results.check_slice("toy", "ci")
    assert calls == ["b"] and check["metric"].tolist() == ["n"] and check["equal"].all()
    rows = run.read_rows(out, "toy")
    rows.loc[(rows["unit"] == "b") & (rows["metric"] == "n"), "value"] += 1e-6
    rows.to_csv(out / "toy.csv", index=False)
    assert not results.check_slice("toy", "ci")["equal"].any()
    rows[(rows["unit"] != "b") | (rows["metric"] != "n")].to_csv(out / "toy.csv", index=False)
    with pytest.raises(AssertionError, match="no committed counterpart"):
        results.check_slice("toy", "ci")
    nothing = dataclasses.replace(narrowed, check_narrowing=lambda s: {"metrics": ["z"]})
    monkeypatch.setattr(results, "get_stage", lambda name: nothing)
    with pytest.raises(AssertionError, match="no rows recomputed"):
        results.check_slice("toy", "ci")
    with pytest.raises(ValueError, match="cannot be computed into a store"):
        run.compute_units(narrowed, "ci", ["b"], overrides={"metrics": ["n"]},
                          store=UnitStore(narrowed, "ci", {}, root=toy / "cache"))


def test_provenance_summary_says_how_the_numbers_were_made(toy):
    out = toy / "out"
    run.run_stage(_toy(), "ci", out, cache_root=toy / "cache", progress=False)
    run.write_comparison(out)
    recorded = results.load_provenance("toy", "ci")
    text = results.provenance_summary({"toy": "ci"}, check={"toy": "ci"}, notes=["cached"])
    lines = text.splitlines()
    assert lines[0] == "- **`toy`**: toy stage"
    assert lines[1].startswith("  - the `ci` run: 4 units, ")
    assert lines[2] == f"  - machine: {recorded['machine']}"
    assert lines[3].startswith(f"  - commit `{recorded['commit'][:10]}`")
    assert lines[4] == f"  - command: `{recorded['command']}`"
    assert lines[5].endswith("2 numbers of 1 unit of `toy` at the `ci` sizes, all equal: True")
    assert lines[6] == "- cached"
    rows = run.read_rows(out, "toy")
    rows.loc[(rows["unit"] == "b") & (rows["metric"] == "n"), "value"] += 1e-6
    rows.to_csv(out / "toy.csv", index=False)
    assert results.provenance_summary({"toy": "ci"}, check={"toy": "ci"}).endswith(
        "all equal: False")
    data, metadata = results.provenance_box({"toy": "ci"})._repr_mimebundle_()
    assert data["text/markdown"] == results.provenance_summary({"toy": "ci"})
    assert metadata == {"scrapbook": {"name": "provenance", "mime_prefix": ""}}
    with pytest.raises(ValueError, match="shown must name at least one stage"):
        results.provenance_summary({})
    with pytest.raises(LookupError, match="no provenance for stage 'toy' in profile 'full'"):
        results.provenance_summary({"toy": "full"})


def test_results_ship_with_the_package_and_the_setting_points_elsewhere(toy, monkeypatch):
    """Outside the repository (as in Colab) the chapters read the results installed with the
    package; ``$MARKEVAL_RESULTS`` points them, and the command's default ``--out``, elsewhere."""
    monkeypatch.setattr(cli, "all_stages", lambda: {"toy": _toy()})
    monkeypatch.setenv("MARKEVAL_CACHE", str(toy / "cache"))
    monkeypatch.chdir(toy)
    assert main(["--stage", "toy", "--profile", "ci"]) == 0  # no --out: the setting's folder
    assert (toy / "out" / "toy.csv").is_file() and (toy / "out" / "paper_comparison.csv").is_file()
    assert results.results_dir() == toy / "out"
    monkeypatch.delenv("MARKEVAL_RESULTS")
    assert results.results_dir() == results.PACKAGE_RESULTS
    assert results.PACKAGE_RESULTS == Path(markeval.__file__).parent / "results"
    assert (results.PACKAGE_RESULTS / "paper_comparison.csv").is_file()
    assert not results.load_comparison("Mark-Evaluate").empty


def test_benchmark_rows_ship_with_the_package(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # outside the repository, as in Colab
    committed = pd.read_csv(RESULTS / "benchmarks" / "mark_evaluate_scale.csv")
    pd.testing.assert_frame_equal(results.benchmark_rows("mark_evaluate_scale"), committed)
    for name in results.BENCHMARK_FILES:
        assert not results.benchmark_rows(name).empty
    with pytest.raises(ValueError, match="name must be one of .*got 'timings'"):
        results.benchmark_rows("timings")


def test_bad_arguments(capsys, tmp_path):
    with pytest.raises(ValueError, match="stage must be one of .*'tac_rouge'.*got 'nope'"):
        get_stage("nope")
    with pytest.raises(ValueError, match="profile must be one of 'ci', 'full', got 'big'"):
        get_stage("tac_rouge").settings_for("big")
    (tmp_path / "a-file").write_text("mine")
    for argv, message in [
        (["--stage", "nope"], "argument --stage: invalid choice: 'nope'"),
        (["--jobs", "0"], "argument --jobs: expects a positive number of worker processes, "
                          "got '0'"),
        (["--jobs", "-1"], "got '-1'"),
        (["--jobs", "two"], "got 'two'"),
        (["--out", str(tmp_path / "a-file")], f"--out {tmp_path / 'a-file'}: is a file, not a "
                                               "folder"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("python -m markeval.reproduce: error: ")
        assert message in err
    assert (tmp_path / "a-file").read_text() == "mine"
    assert main(["--list"]) == 0
    assert "tac_rouge" in capsys.readouterr().out


def _one_line_error(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("python -m markeval.reproduce: error: ")
    assert message in err, err


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_an_unwritable_out_is_refused_before_any_unit_runs(capsys, monkeypatch):
    """/proc is a folder no one may create files in, root included (the tests run as root)."""
    monkeypatch.setattr(cli, "run_stage", lambda *a, **k: pytest.fail("a unit ran"))
    _one_line_error(capsys, ["--stage", "tac_rouge", "--profile", "ci", "--out", "/proc"],
                    "--out /proc: cannot write into the folder (")


def test_a_scheduler_address_that_answers_http_is_named_in_one_line(capsys, monkeypatch,
                                                                     tmp_path):
    """Before, Dask read "HTTP/1.1 4" as a frame length and asked numpy for 3.07 EiB."""
    pytest.importorskip("distributed")
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))
    answered = []

    def answer_http():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
                         b"Connection: keep-alive\r\n\r\n")
            answered.append(conn)  # kept open, as a keep-alive server does
    threading.Thread(target=answer_http, daemon=True).start()
    monkeypatch.setattr(cli, "run_stage", lambda *a, **k: pytest.fail("a unit ran"))
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    try:
        _one_line_error(capsys, ["--stage", "tac_rouge", "--profile", "ci", "--scheduler",
                                 address, "--out", str(tmp_path)],
                        f"--scheduler {address}: what answers there does not speak Dask's "
                        f"protocol")
    finally:
        server.close()
        for conn in answered:
            conn.close()


def test_ctrl_c_keeps_the_finished_units_and_says_how_to_go_on(toy, monkeypatch, capsys):
    monkeypatch.setattr(cli, "all_stages", lambda: {"toy": _toy()})
    monkeypatch.setenv("MARKEVAL_CACHE", str(toy / "cache"))
    interrupt_at.append("c")
    assert main(["--stage", "toy", "--profile", "ci", "--out", str(toy / "out")]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == "interrupted; 2 units kept, rerun to continue"
    interrupt_at.clear()
    assert main(["--stage", "toy", "--profile", "ci", "--out", str(toy / "out")]) == 0
    assert "toy (ci): 2 units computed, 2 reused" in capsys.readouterr().out


_SLOW_STAGE = """
import os, sys, time
import pandas as pd
from markeval.reproduce import cli, run
from markeval.reproduce.stage import Stage

def compute(unit, settings):
    time.sleep(0.3)
    return pd.DataFrame({"metric": ["m"], "value": [float(len(unit))], "pid": [os.getpid()]})

STAGE = Stage(name="slow", title="slow", settings=lambda p: {}, compute=compute,
              units=lambda s: [f"u{i:02d}" for i in range(60)],
              compare=lambda rows, s: pd.DataFrame(), parallel=sys.argv[1] != "1")
if __name__ == "__main__":
    import slow_stage  # the workers unpickle the stage from this module
    cli.all_stages = run.all_stages = lambda: {"slow": slow_stage.STAGE}
    sys.argv = ["x", "--stage", "slow", "--profile", "ci", "--out", sys.argv[2],
                "--jobs", sys.argv[1]]
    import runpy
    runpy.run_module("markeval.reproduce", run_name="__main__")
"""


@pytest.mark.parametrize("stop", ["ctrl-c", "sigterm"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_real_ctrl_c_or_sigterm_prints_one_line_and_exits_130_or_143(tmp_path, jobs, stop):
    import os
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "slow_stage.py").write_text(_SLOW_STAGE)
    env = dict(os.environ, MARKEVAL_CACHE=str(tmp_path / "cache"), PYTHONPATH=str(tmp_path))
    process = subprocess.Popen(  # its own process group, as a terminal's foreground job
        [sys.executable, str(tmp_path / "slow_stage.py"), jobs, str(tmp_path / "out")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
        # as a terminal starts it: a test run started in the background (`&`, nohup) ignores
        # SIGINT, and the child would inherit that and never see the Ctrl-C
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    units = tmp_path / "cache" / "reproduce" / "ci"

    def workers_seen() -> set:
        """Processes that finished a unit. A worker still importing when Ctrl-C comes has
        not yet ignored it, and dies with a traceback of its own: a terminal's Ctrl-C in
        the first second of a run can show one, so the test waits until every worker is up."""
        pids = set()
        for path in units.glob("*/*.csv"):
            try:
                pids |= set(pd.read_csv(path, comment="#")["pid"])
            except (OSError, ValueError, KeyError):
                pass
        return pids

    deadline = time.monotonic() + 120
    while ((len(list(units.glob("*/*.csv"))) < 2 or len(workers_seen()) < int(jobs))
           and time.monotonic() < deadline):
        time.sleep(0.05)
    if stop == "ctrl-c":
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C sends: the whole group, workers too
    else:
        process.send_signal(signal.SIGTERM)  # what `kill PID` sends: the main process only
    _, err = process.communicate(timeout=120)
    kept = len(list(units.glob("*/*.csv")))
    assert process.returncode == (130 if stop == "ctrl-c" else 143), err
    assert "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == f"interrupted; {kept} units kept, rerun to continue", err
    assert 2 <= kept < 60


def test_sigterm_is_ctrl_c_only_inside_the_cli_and_only_where_not_ignored():
    import os
    import signal
    import time

    from markeval.reproduce.cli import _sigterm_as_ctrl_c

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt), _sigterm_as_ctrl_c() as received:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler runs here at the latest
    assert received == [signal.SIGTERM]
    assert signal.getsignal(signal.SIGTERM) is before
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with _sigterm_as_ctrl_c() as received:
            assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGTERM)
        assert received == []
    finally:
        signal.signal(signal.SIGTERM, before)


# --- the committed results ------------------------------------------------------------------

STAGES = sorted(all_stages())


@pytest.mark.parametrize("name", STAGES)
def test_committed_results_cover_every_unit(name):
    """Every stage has its ci rows; a profile that was run has every unit (no partial tables)."""
    stage = get_stage(name)
    rows = run.read_rows(RESULTS, name)
    assert "ci" in set(rows["profile"]), f"{name}: no committed rows; run `make reproduce`"
    for profile in sorted(set(rows["profile"])):
        done = set(rows.loc[rows["profile"] == profile, "unit"])
        assert done == set(stage.units(stage.settings_for(profile))), (
            f"{name} ({profile}): rerun `make reproduce`")


def _check_plan(stage, profile):
    """What a profile's check recomputes: its units, and the key of the settings it computes
    them under (narrowed; a unit's rows do not depend on the selection settings)."""
    settings = stage.settings_for(profile)
    narrowed = {**settings, **stage.check_narrowing(settings)}
    return list(stage.check_units(settings)), settings_key(stage, narrowed)


#: The stages whose ci check a chapter recomputes while it executes (its "How these numbers
#: were made" box calls ``check_slice``, in a cell whose output nbval compares: "all equal:
#: True"), so `make test` runs that check already, under nbval.
CHECKED_BY_CHAPTERS = {"sensitivity": "13_sensitivity", "word_swap": "13_sensitivity",
                       "wmt17_segment": "15_mt_embedding_correlation",
                       "wmt17_system": "15_mt_embedding_correlation",
                       "wmt17_word_curve": "15_mt_embedding_correlation",
                       "tac_embedding": "17_summarization_embedding_correlation",
                       "ladder": "18_unconditional_generation",
                       "mode_collapse_recent": "19_mauve", "word_swap_recent": "19_mauve",
                       "ladder_recent": "19_mauve", "decoding": "19_mauve",
                       "wmt17_system_recent": "19_mauve"}


def _checks():
    """(stage, profile) of every consistency check, the slow ones marked: `make test-full`.

    The full profile's checks encode sets of the papers' sizes (minutes each on a cold cache);
    the ci checks recompute the same code on the ci slice. A stage run with mpnet (``*_mpnet``,
    ``*_mpnet_recent``) is its MiniLM stage's code with the other encoder, whose 12 layers make
    its ci check minutes instead of seconds: `make test` checks the MiniLM stage's ci slice. A
    ci check that a chapter recomputes (:data:`CHECKED_BY_CHAPTERS`) runs here in `make
    test-full` only.
    """
    def slow(name, profile):
        return profile == "full" or "mpnet" in name.split("_") or name in CHECKED_BY_CHAPTERS

    return [pytest.param(name, profile, marks=pytest.mark.slow if slow(name, profile) else ())
            for name in STAGES for profile in ("ci", "full")]


@pytest.mark.parametrize("name, chapter", sorted(CHECKED_BY_CHAPTERS.items()))
def test_the_chapters_recompute_the_checks_left_to_them(name, chapter):
    """Each stage of :data:`CHECKED_BY_CHAPTERS` is shown by its chapter, whose provenance cell
    recomputes its ci slice under nbval's comparison of the outputs."""
    nb = nbformat.read(REPO / "book" / f"{chapter}.ipynb", 4)
    cells = [c for c in nb.cells if c.cell_type == "code" and "provenance_box(" in c.source
             and "check=" in c.source]
    assert cells, f"{chapter}: no provenance cell with a check"
    for cell in cells:
        assert "nbval-check-output" in cell.metadata.get("tags", []), (
            f"{chapter}: nbval ignores a provenance cell")
    shown = "\n".join(o.get("data", {}).get("text/markdown", "") for cell in cells
                      for o in cell.outputs)
    call = f"check_slice({name!r}, 'ci')"
    lines = [line for line in shown.splitlines() if f"(`{call}`)" in line]
    assert lines, f"{chapter} does not run {call}"
    assert lines[0].endswith("all equal: True"), lines[0]


@pytest.mark.parametrize("name, profile", _checks())
def test_committed_results_follow_from_the_code(name, profile):
    """The consistency test: recompute the stage's check units, equal to the committed rows."""
    stage = get_stage(name)
    profiles = set(run.read_rows(RESULTS, name)["profile"])
    if profile not in profiles:
        pytest.skip(f"{name} has no committed {profile} rows yet")
    units, key = _check_plan(stage, profile)
    if not units:
        pytest.skip(f"{name} names no {profile} unit cheap enough to recompute here")
    if profile == "full" and "ci" in profiles and _check_plan(stage, "ci") == (units, key):
        # ci's check recomputes these very rows (the profiles differ only in which units
        # exist): full's committed rows of those units must equal ci's
        def rows_of(p):
            rows = results.load_rows(name, p)
            return rows[rows["unit"].isin(units)].drop(columns="profile").reset_index(drop=True)

        full = rows_of("full")
        assert not full.empty, f"{name}: no full rows of {units}"
        pd.testing.assert_frame_equal(full, rows_of("ci"), check_exact=False, rtol=1e-11,
                                      atol=stage.tolerance)
        return
    check = results.check_slice(name, profile)
    assert check["equal"].all(), check[~check["equal"]].to_string()


def test_committed_comparison_follows_from_the_committed_rows(tmp_path):
    """Rebuilt in a copy of the results folder, whose manifest proves them markeval's."""
    for path in [*RESULTS.glob("*.csv"), RESULTS / _written.MANIFEST]:
        (tmp_path / path.name).write_bytes(path.read_bytes())
    run.write_comparison(tmp_path)
    rebuilt = pd.read_csv(tmp_path / "paper_comparison.csv")
    committed = pd.read_csv(RESULTS / "paper_comparison.csv")
    pd.testing.assert_frame_equal(rebuilt, committed, rtol=1e-9)


def test_full_runs_cover_the_papers_tables():
    """Every table the book reproduces has full-profile lines beside the paper's numbers."""
    table = pd.read_csv(RESULTS / "paper_comparison.csv")
    covered = set(map(tuple, table.loc[table["profile"] == "full", ["paper", "table"]].values))
    wanted = {("Mark-Evaluate", f"Table {n}") for n in (1, 2, 3, 5, 6)} | {
        ("MoverScore", f"Table {n}") for n in (1, 2, 5, 6, 7)}
    assert wanted <= covered, sorted(wanted - covered)


def test_both_encoders_stand_beside_the_papers():
    """Every embedding table has full lines from MiniLM and from all-mpnet-base-v2, and the
    ladder's mpnet run answers Table 4 (its sSBERT column)."""
    table = pd.read_csv(RESULTS / "paper_comparison.csv")
    full = table[table["profile"] == "full"]
    encoder = full["setting"].str.extract(r"^(all-[A-Za-z0-9.-]+)", expand=False)
    covered = set(map(tuple, full.assign(encoder=encoder).dropna(subset=["encoder"])[
        ["paper", "table", "encoder"]].values))
    tables = [("MoverScore", n) for n in (1, 2, 5, 6)] + [("Mark-Evaluate", n)
                                                          for n in (1, 2, 3, 5, 6)]
    wanted = {(paper, f"Table {n}", model) for paper, n in tables
              for model in ("all-MiniLM-L6-v2", "all-mpnet-base-v2")}
    wanted.add(("Mark-Evaluate", "Table 4", "all-mpnet-base-v2"))
    assert wanted <= covered, sorted(wanted - covered)


def test_sentbleu_and_chrf_rows_match_moverscore_table_7():
    """No encoder either: run as the WMT17 metrics task ran them, they must match the paper."""
    table = pd.read_csv(RESULTS / "paper_comparison.csv")
    rows = table[(table["profile"] == "full") & (table["table"] == "Table 7")
                 & table["row"].isin(["SentBLEU", "chrF++"])]
    assert len(rows) == 16  # 7 pairs and the average, two rows
    gap = (rows["our_value"] - rows["paper_value"]).abs()
    assert gap.max() <= 0.01, rows[gap > 0.01].to_string()


def test_rouge_rows_match_moverscore_table_2():
    """The protocol check: ROUGE does not depend on an encoder, so it must match the paper."""
    table = pd.read_csv(RESULTS / "paper_comparison.csv")
    rouge_rows = table[(table["profile"] == "full") & table["row"].isin(["ROUGE-1", "ROUGE-2"])
                       & (table["table"] == "Table 2")]
    assert len(rouge_rows) == 16
    gap = (rouge_rows["our_value"] - rouge_rows["paper_value"]).abs()
    assert gap.max() <= 0.01, rouge_rows[gap > 0.01].to_string()
