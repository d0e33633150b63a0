"""Render a PNG report from Strata training metrics.

`strata train --metrics-out RUN.jsonl` writes one JSON object per line: an `"event": "epoch"`
record after every epoch and one `"event": "final"` record at the end. This module draws one
figure from one or more such files, runs overlaid in one colour each:

  * training loss per epoch;
  * validation accuracy per epoch (gaps where an epoch was not evaluated);
  * busy seconds per pipeline stage per epoch (stacked bars, runs side by side), with the
    epoch's wall time marked;
  * disk read throughput (MB/s) per epoch, with the cache hit rate on a twin axis.

With `--against-time` the figure is instead one panel, time to accuracy: validation accuracy
against the run's wall clock (each epoch's `elapsed_s`, start-up and evaluation included; the
summed `time_s` for metrics written before that field), every run one line, and with `--target`
the accuracy to reach drawn across.

Usage:

  python3 -m strata.report RUN.jsonl [RUN2.jsonl ...] -o out.png [--labels a,b] [--title T]
      [--against-time [--target ACC]]

Bad input (missing file, a line that is not JSON, no epoch records) prints one line
`strata.report: error: <what> (<file>[:<line>])` on stderr and exits with status 2; the output
file is then left untouched. The module imports nothing else from the `strata` package, so it
also runs as a plain script before the compiled extension is built.
"""

import argparse
import json
import math
import os
import secrets
import sys
from pathlib import Path
from typing import NamedTuple

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

PROG = "strata.report"
DPI = 100

# (label, key, where): the bars stacked in the stage panel. "busy" keys live in the epoch's
# stage_busy object; "top" keys are top-level and only present for multistage runs.
STAGES = (
    ("sample", "sample_s", "busy"),
    ("fetch", "fetch_s", "busy"),
    ("fetch wait", "fetch_wait_s", "busy"),
    ("train", "train_s", "busy"),
    ("load", "load_busy_s", "top"),
    ("stall", "stall_s", "top"),
)
STAGE_COLORS = ("#9ecae1", "#4292c6", "#fdae6b", "#74c476", "#bcbddc", "#d6616b")
RUN_HATCHES = ("//", "\\\\", "..", "xx", "--", "++")


class Run(NamedTuple):
    """One metrics file, ready to draw."""

    color: str
    name: str  # short label: the file stem or the user's label
    label: str  # name plus the final test accuracy and total time
    epochs: list
    final: dict


class ReportError(Exception):
    """Bad input or output; formats as the CLI's one-line error message."""

    def __init__(self, what, path=None, line=None):
        super().__init__(what)
        self.what = what
        self.path = path
        self.line = line

    def __str__(self):
        if self.path is None:
            return self.what
        where = str(self.path) if self.line is None else f"{self.path}:{self.line}"
        return f"{self.what} ({where})"


def load_run(path):
    """Reads one metrics JSON lines file.

    Args:
      path: the file written by `strata train --metrics-out`.

    Returns:
      (epochs, final): the epoch records (dicts) in file order, and the final record (the last
      one if there are several) or None when the run did not finish.

    Raises:
      ReportError: the file cannot be read, a line is not a JSON object, or there are no
        epoch records.
    """
    epochs, final = [], None
    try:
        with open(path, encoding="utf-8") as f:
            for lineno, text in enumerate(f, start=1):
                if not text.strip():
                    continue
                try:
                    record = json.loads(text)
                except ValueError:
                    raise ReportError("line is not JSON", path, lineno) from None
                if not isinstance(record, dict):
                    raise ReportError("line is not a JSON object", path, lineno)
                # Other event kinds are ignored so newer trainers stay readable.
                if record.get("event") == "epoch":
                    epochs.append(record)
                elif record.get("event") == "final":
                    final = record
    except OSError as e:
        raise ReportError(f"cannot read file: {e.strerror or e}", path) from None
    except UnicodeDecodeError:
        raise ReportError("file is not UTF-8 text", path) from None
    if not epochs:
        raise ReportError("no epoch records", path)
    return epochs, final


def _num(record, key):
    """Returns record[key] as a float, NaN when absent, null or not a number."""
    value = record.get(key) if isinstance(record, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return math.nan
    return float(value)


def _epoch_numbers(epochs):
    # Fall back to the record's position if an epoch number is missing.
    return [int(e["epoch"]) if isinstance(e.get("epoch"), int) else i
            for i, e in enumerate(epochs)]


def _run_label(label, final):
    if final is None:
        return f"{label} (no final record)"
    parts = []
    test_acc, total = _num(final, "test_acc"), _num(final, "total_time_s")
    if not math.isnan(test_acc):
        parts.append(f"test {test_acc:.4f}")
    if not math.isnan(total):
        parts.append(f"{total:.1f} s")
    return f"{label} ({', '.join(parts)})" if parts else label


def _plot_loss(ax, runs):
    for run in runs:
        ax.plot(_epoch_numbers(run.epochs), [_num(e, "train_loss") for e in run.epochs],
                marker="o", color=run.color, label=run.label)
    ax.set_title("Training loss")
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss")
    ax.legend(fontsize="small")


def _plot_val_acc(ax, runs):
    any_value = False
    for run in runs:
        acc = [_num(e, "val_acc") for e in run.epochs]
        any_value |= any(not math.isnan(a) for a in acc)
        # NaN breaks the line; the markers keep isolated evaluated epochs visible.
        ax.plot(_epoch_numbers(run.epochs), acc, marker="o", color=run.color)
    if not any_value:
        ax.text(0.5, 0.5, "not evaluated", transform=ax.transAxes, ha="center", va="center",
                color="gray")
    ax.set_title("Validation accuracy")
    ax.set_xlabel("epoch")
    ax.set_ylabel("accuracy")


def _wall_clock(epochs):
    # Metrics from before elapsed_s: the epochs' training time summed, evaluation left out.
    if all(not math.isnan(_num(e, "elapsed_s")) for e in epochs):
        return [_num(e, "elapsed_s") for e in epochs]
    clock, total = [], 0.0
    for e in epochs:
        total += 0.0 if math.isnan(_num(e, "time_s")) else _num(e, "time_s")
        clock.append(total)
    return clock


def _plot_val_against_time(ax, runs, target):
    markers = "osD^v<>ph*"
    for i, run in enumerate(runs):
        acc = [_num(e, "val_acc") for e in run.epochs]
        clock = _wall_clock(run.epochs)
        points = [(t, a) for t, a in zip(clock, acc) if not math.isnan(a)]
        ax.plot([t for t, _ in points], [a for _, a in points], marker=markers[i % len(markers)],
                color=run.color, label=run.label)
    if target is not None:
        ax.axhline(target, color="black", linestyle="--", linewidth=1,
                   label=f"target {target:.4f}")
    ax.set_title("Validation accuracy against wall time")
    ax.set_xlabel("seconds since the run started")
    ax.set_ylabel("accuracy")
    ax.grid(True, alpha=0.3)
    # Beside the axes, so that no curve is hidden behind it.
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _plot_stages(ax, runs):
    # Stages run concurrently, so their busy seconds can add up to more than the epoch's wall
    # time; the wall time is drawn as a black line across each bar. Colour encodes the stage,
    # so with several runs each run's bars get their own hatch, drawn in the run's colour.
    width = 0.8 / len(runs)
    used = set()
    handles = []
    for r, run in enumerate(runs):
        color, epochs = run.color, run.epochs
        hatch = RUN_HATCHES[r % len(RUN_HATCHES)] if len(runs) > 1 else None
        xs = [x - 0.4 + width * (r + 0.5) for x in _epoch_numbers(epochs)]
        bottom = [0.0] * len(epochs)
        for s, (_, key, where) in enumerate(STAGES):
            if where == "busy":
                values = [_num(e.get("stage_busy"), key) for e in epochs]
            else:
                values = [_num(e, key) for e in epochs]
            if all(math.isnan(v) for v in values):
                continue  # e.g. load/stall of a single-stage run
            values = [0.0 if math.isnan(v) else v for v in values]
            ax.bar(xs, values, width, bottom=bottom, color=STAGE_COLORS[s], edgecolor=color,
                   hatch=hatch, linewidth=1.0)
            bottom = [b + v for b, v in zip(bottom, values)]
            used.add(s)
        ax.hlines([_num(e, "time_s") for e in epochs], [x - width / 2 for x in xs],
                  [x + width / 2 for x in xs], colors="black", linewidths=2.5, zorder=3)
        if hatch is not None:
            handles.append(Patch(facecolor="white", edgecolor=color, hatch=hatch,
                                 label=run.name))
    handles = [Patch(facecolor=STAGE_COLORS[s], label=STAGES[s][0])
               for s in sorted(used)] + handles
    handles.append(Line2D([], [], color="black", linewidth=2.5, label="epoch time"))
    ax.legend(handles=handles, fontsize="small", ncol=2)
    ax.set_title("Stage busy time per epoch")
    ax.set_xlabel("epoch")
    ax.set_ylabel("seconds")


def _plot_disk(ax, runs):
    hit_ax = ax.twinx()
    for run in runs:
        color, epochs = run.color, run.epochs
        xs = _epoch_numbers(epochs)
        mbps = []
        for e in epochs:
            t = _num(e, "time_s")
            mbps.append(_num(e, "disk_bytes") / t / 1e6 if t > 0 else math.nan)
        ax.plot(xs, mbps, marker="o", color=color)
        hit_ax.plot(xs, [_num(e, "hit_rate") for e in epochs], marker="s", linestyle="--",
                    color=color)
    ax.set_title("Disk throughput and cache hit rate")
    ax.set_xlabel("epoch")
    ax.set_ylabel("disk MB/s")
    ax.set_ylim(bottom=0)
    hit_ax.set_ylabel("cache hit rate")
    hit_ax.set_ylim(0, 1)
    ax.legend(handles=[Line2D([], [], color="black", marker="o", label="disk MB/s"),
                       Line2D([], [], color="black", marker="s", linestyle="--",
                              label="hit rate")],
              fontsize="small", loc="lower left")


def render(paths, out, labels=None, title=None, width=1200, height=800, against_time=False,
           target=None):
    """Renders the report for one or more metrics files to a PNG.

    Args:
      paths: metrics JSON lines files, one per run.
      out: the PNG to write; replaced atomically, untouched on error.
      labels: one legend label per run; defaults to each file's stem.
      title: the figure title; defaults to a generic one.
      width: image width in pixels.
      height: image height in pixels.
      against_time: one panel of validation accuracy against wall time instead of four.
      target: with against_time, an accuracy to draw across (None: none).

    Raises:
      ReportError: bad input, bad arguments, or the output cannot be written.
    """
    paths = [Path(p) for p in paths]
    if not paths:
        raise ReportError("no metrics files given")
    if labels is None:
        labels = [p.stem for p in paths]
    if len(labels) != len(paths):
        raise ReportError(f"{len(labels)} labels for {len(paths)} runs")
    if width < 100 or height < 100:
        raise ReportError(f"image size {width}x{height} is below 100x100")

    # Load everything before drawing so that bad input never produces an output file.
    runs = []
    for i, (path, label) in enumerate(zip(paths, labels)):
        epochs, final = load_run(path)
        runs.append(Run(f"C{i}", label, _run_label(label, final), epochs, final))

    fig = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)  # no pyplot: no global state, no display backend
    if against_time:
        _plot_val_against_time(fig.subplots(), runs, target)
        fig.suptitle(title or "Time to accuracy")
        _save_atomically(fig, Path(out))
        return
    if target is not None:
        raise ReportError("--target draws on the --against-time figure only")
    axes = fig.subplots(2, 2)
    _plot_loss(axes[0][0], runs)
    _plot_val_acc(axes[0][1], runs)
    _plot_stages(axes[1][0], runs)
    _plot_disk(axes[1][1], runs)
    for ax in axes.flat:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(True, alpha=0.3)
    fig.suptitle(title or ("Strata training run" if len(runs) == 1 else "Strata training runs"))
    _save_atomically(fig, Path(out))


def _save_atomically(fig, out):
    # A uniquely named sibling is renamed over the target, so readers never see a partial PNG.
    # os.open with 0o666 (rather than mkstemp's 0o600) keeps the usual umask-based mode.
    tmp = out.with_name(f".{out.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as e:
        raise ReportError(f"cannot write output: {e.strerror or e}", out) from None
    try:
        with os.fdopen(fd, "wb") as f:
            # No bbox_inches="tight": that would change the pixel size.
            fig.savefig(f, format="png", dpi=DPI)
        os.replace(tmp, out)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise ReportError(f"cannot write output: {e.strerror or e}", out) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def main(argv=None):
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="Render a PNG report from Strata --metrics-out files.")
    parser.add_argument("runs", nargs="+", metavar="RUN.jsonl", help="metrics file, one per run")
    parser.add_argument("-o", "--output", required=True, metavar="OUT.png", help="PNG to write")
    parser.add_argument("--labels", help="comma-separated legend labels, one per run")
    parser.add_argument("--title", help="figure title")
    parser.add_argument("--width", type=int, default=1200, help="pixels (default 1200)")
    parser.add_argument("--height", type=int, default=800, help="pixels (default 800)")
    parser.add_argument("--against-time", action="store_true",
                        help="one panel: validation accuracy against the run's wall clock")
    parser.add_argument("--target", type=float, metavar="ACC",
                        help="with --against-time, an accuracy to draw across")
    args = parser.parse_args(argv)
    labels = args.labels.split(",") if args.labels is not None else None
    try:
        render(args.runs, args.output, labels=labels, title=args.title, width=args.width,
               height=args.height, against_time=args.against_time, target=args.target)
    except ReportError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
