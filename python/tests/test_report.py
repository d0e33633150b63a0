"""Tests for strata.report: PNG rendering from --metrics-out files, and its CLI."""

import importlib.util
import json
import math
import struct
import subprocess
import sys
from pathlib import Path

import pytest

REPORT_PY = Path(__file__).resolve().parents[1] / "strata" / "report.py"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _load_report_module():
    # Loaded from its file, not as strata.report: the package __init__ imports the compiled
    # extension, which need not be built for these tests.
    spec = importlib.util.spec_from_file_location("strata_report_under_test", REPORT_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


report = _load_report_module()


def _epoch(epoch, multistage=False, val_acc=0.5):
    record = {
        "event": "epoch", "epoch": epoch, "time_s": 10.0 - epoch, "train_loss": 2.0 / (epoch + 1),
        "val_acc": val_acc, "batches": 8, "disk_bytes": 500_000_000, "disk_reads": 1000,
        "hit_rate": 0.2 + 0.1 * epoch, "topology": "memory", "adjacency_reads": 0,
        "adjacency_hit_rate": 0.0,
        "stage_busy": {"sample_s": 0.5, "fetch_s": 3.0, "fetch_wait_s": 4.0, "train_s": 2.0},
        "max_batches_in_flight": 2, "reads_in_flight_target": 64, "device_iops": 1e5,
        "read_latency_us": 900.0, "peak_rss_bytes": 1 << 29,
    }
    if multistage:
        record.update(macro_batches=4, reuse_mean=3.5, load_bytes=1 << 30, load_busy_s=2.0,
                      load_rate_bytes_per_s=(1 << 30) / 2.0, stall_s=0.75)
    return record


def _final(test_acc):
    return {"event": "final", "test_acc": test_acc, "val_acc": 0.7, "eval_point": "best",
            "best_epoch": 2, "total_time_s": 27.0, "peak_rss_bytes": 1 << 29,
            "memory_budget_bytes": 1 << 30}


def _write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def runs(tmp_path):
    """Two 3-epoch runs: single-stage with an unevaluated epoch, and multistage."""
    plain = _write_jsonl(tmp_path / "plain.jsonl",
                         [_epoch(0), _epoch(1, val_acc=None), _epoch(2), _final(0.71)])
    multi = _write_jsonl(tmp_path / "multi.jsonl",
                         [_epoch(e, multistage=True) for e in range(3)] + [_final(0.73)])
    return plain, multi


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_load_run_splits_epochs_and_final(runs):
    epochs, final = report.load_run(runs[0])
    assert [e["epoch"] for e in epochs] == [0, 1, 2]
    assert epochs[1]["val_acc"] is None
    assert final["test_acc"] == 0.71


def test_load_run_without_final_record(tmp_path):
    path = _write_jsonl(tmp_path / "unfinished.jsonl", [_epoch(0)])
    epochs, final = report.load_run(path)
    assert len(epochs) == 1 and final is None


def test_load_run_accepts_nan_val_acc(tmp_path):
    path = tmp_path / "nan.jsonl"
    path.write_text(json.dumps(_epoch(0, val_acc=math.nan)) + "\n")  # writes a bare NaN
    epochs, _ = report.load_run(path)
    assert math.isnan(epochs[0]["val_acc"])


@pytest.mark.parametrize("size", [(1200, 800), (1001, 777), (640, 480)])
def test_render_two_runs_exact_size(runs, tmp_path, size):
    out = tmp_path / "report.png"
    report.render(runs, out, labels=["plain", "multi"], title="t", width=size[0],
                  height=size[1])
    assert _png_size(out) == size
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_render_defaults_to_1200x800(runs, tmp_path):
    out = tmp_path / "default.png"
    report.render([runs[1]], out)
    assert _png_size(out) == (1200, 800)


@pytest.mark.parametrize("contents, what, line", [
    ('{"event": "epoch", "epoch": 0}\nnot json\n', "line is not JSON", 2),
    ("[1, 2]\n", "line is not a JSON object", 1),
    ('{"event": "final", "test_acc": 0.5}\n', "no epoch records", None),
])
def test_load_run_rejects_bad_input(tmp_path, contents, what, line):
    path = tmp_path / "bad.jsonl"
    path.write_text(contents)
    with pytest.raises(report.ReportError) as info:
        report.load_run(path)
    where = str(path) if line is None else f"{path}:{line}"
    assert str(info.value) == f"{what} ({where})"


def test_render_label_count_mismatch(runs, tmp_path):
    with pytest.raises(report.ReportError, match="1 labels for 2 runs"):
        report.render(runs, tmp_path / "out.png", labels=["only"])
    assert not (tmp_path / "out.png").exists()


def test_wall_clock_is_elapsed_s_else_summed_training_time():
    timed = [dict(_epoch(e), elapsed_s=20.0 * (e + 1)) for e in range(3)]
    assert report._wall_clock(timed) == [20.0, 40.0, 60.0]
    # Older metrics: the epochs' time_s (10, 9, 8) summed.
    assert report._wall_clock([_epoch(e) for e in range(3)]) == [10.0, 19.0, 27.0]


def test_render_against_time_with_target(runs, tmp_path):
    out = tmp_path / "tta.png"
    report.render(runs, out, labels=["plain", "multi"], against_time=True, target=0.5,
                  width=800, height=500)
    assert _png_size(out) == (800, 500)
    with pytest.raises(report.ReportError, match="--target draws on the --against-time"):
        report.render(runs, tmp_path / "four.png", target=0.5)
    assert not (tmp_path / "four.png").exists()


def _cli(*args):
    return subprocess.run([sys.executable, str(REPORT_PY), *map(str, args)],
                          capture_output=True, text=True, check=False)


def test_cli_renders(runs, tmp_path):
    out = tmp_path / "cli.png"
    result = _cli(*runs, "-o", out, "--labels", "a,b", "--title", "Two runs",
                  "--width", "900", "--height", "600")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert _png_size(out) == (900, 600)


def test_cli_malformed_line_exits_2_and_writes_nothing(runs, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_epoch(0)) + "\n{truncated\n")
    out = tmp_path / "cli.png"
    result = _cli(runs[0], bad, "-o", out)
    assert result.returncode == 2
    assert result.stderr == f"strata.report: error: line is not JSON ({bad}:2)\n"
    assert result.stdout == ""
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "multi.jsonl",
                                                          "plain.jsonl"]


def test_cli_missing_file_keeps_existing_output(tmp_path):
    out = tmp_path / "old.png"
    out.write_bytes(b"previous")
    missing = tmp_path / "missing.jsonl"
    result = _cli(missing, "-o", out)
    assert result.returncode == 2
    assert result.stderr.startswith("strata.report: error: cannot read file: ")
    assert result.stderr.endswith(f" ({missing})\n")
    assert result.stderr.count("\n") == 1
    assert out.read_bytes() == b"previous"
