#!/usr/bin/env python3
"""Plots (PNG) of a scaling study.

    /usr/bin/python3 analysis/plots.py STUDY_DIR [--out DIR]

Writes into STUDY_DIR/analysis/ (or --out), with KIND = strong or weak:
  KIND_speedup.png          speedup of each phase against ranks, with the ideal line (weak: scaled speedup)
  KIND_time_split.png       time per phase as stacked bars, one bar per run
  residual.png              solver residual against iteration, one line per run (runs with radiosity.h5)
  formfactor_diagnostics.png  row-sum histogram and reciprocity-error histogram of one matrix (the reference
                            run's for strong scaling, the largest for weak; runs with a form-factor file)
Each plot is made when its data exist; the program says which ones it skipped and why. See analysis/README.md.
"""

import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")  # batch jobs have no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matrix_checks  # noqa: E402
from study import Scaling, Study, StudyError  # noqa: E402

COLOURS = {"I/O": "#4c72b0", "device memory": "#8172b2", "kernel": "#dd8452", "visibility": "#55a868",
           "solve": "#c44e52", "render": "#937860", "other": "#8c8c8c", "total": "#000000"}


def SpeedupPlot(study, path):
    ref = study.reference
    ranks = np.array([r.ranks for r in study.runs], dtype=float)
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    ax.plot(ranks, ranks / ref.ranks, "k--", lw=1, label="ideal")
    for c in study.Categories() + ["total"]:
        getter = (lambda r: r.total) if c == "total" else (lambda r, c=c: r.CategorySeconds()[c])
        points = [(r.ranks, Scaling(study, r, getter)[0]) for r in study.runs]
        points = [(p, s) for p, s in points if s is not None]
        if len(points) < 2:
            continue  # a phase timed in at most one run has no curve
        xs, ys = zip(*points)
        ax.plot(xs, ys, "-o", color=COLOURS.get(c), lw=2.5 if c == "total" else 1.5, ms=4, label=c)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(ranks)
    ax.set_xticklabels(["%d" % p for p in ranks])
    ax.set_xlabel("MPI ranks")
    if study.kind == "strong":
        ax.set_ylabel("speedup T(%d) / T(P)" % ref.ranks)
        ax.set_title("Strong scaling, %s patches" % (ref.patches or "?"))
    else:
        ax.set_ylabel("scaled speedup (work-normalised)")
        ax.set_title("Weak scaling, %s patches per rank" % _PerRank(study))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _PerRank(study):
    values = {r.patches // r.ranks for r in study.runs if r.patches}
    return "/".join(str(v) for v in sorted(values)) or "?"


def TimeSplitPlot(study, path):
    cats = study.Categories()
    fig, ax = plt.subplots(figsize=(max(6.4, 1.1 * len(study.runs) + 2), 4.8))
    x = np.arange(len(study.runs))
    bottom = np.zeros(len(study.runs))
    for c in cats:
        values = np.array([r.CategorySeconds()[c] for r in study.runs])
        if not values.any():
            continue
        ax.bar(x, values, 0.6, bottom=bottom, color=COLOURS.get(c), label=c)
        bottom += values
    ax.set_xticks(x)
    ax.set_xticklabels(["%d rank%s\n%s patches" % (r.ranks, "" if r.ranks == 1 else "s", r.patches or "?")
                        for r in study.runs], fontsize=8)
    ax.set_ylabel("seconds (slowest rank)")
    ax.set_title("%s scaling: time per phase" % study.kind.capitalize())
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def ResidualPlot(study, path):
    import h5py
    curves = []
    for run in study.runs:
        rad = run.RadiosityFile()
        if rad is None:
            continue
        with h5py.File(rad, "r") as f:
            if "radiosity/residual" not in f:
                continue
            residual = f["radiosity/residual"][:]
            solver = f["radiosity"].attrs.get("solver", b"")
        if isinstance(solver, bytes):
            solver = solver.decode()
        curves.append((run, residual, solver))
    if not curves:
        return "no run wrote radiosity.h5 with /radiosity/residual (use --command run)"
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    for run, residual, solver in curves:
        ax.semilogy(np.arange(1, len(residual) + 1), np.maximum(residual, 1e-300), "-o", ms=3,
                    label="%s, %s patches%s" % (run.Label(), run.patches or "?", ", " + solver if solver else ""))
    ax.set_xlabel("iteration")
    ax.set_ylabel("relative residual max|E - (I - rho F) B| / max|E|")
    ax.set_title("Radiosity solver convergence")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


def DiagnosticsPlot(study, path):
    candidates = [(r, r.FormFactorFile()) for r in study.runs]
    candidates = [(r, p) for r, p in candidates if p is not None]
    if not candidates:
        return "no run left a form-factor matrix (formfactors.h5, or run --save-formfactors)"
    # Strong scaling: every run has the same matrix (checked in the tables), so the reference run's stands for
    # all. Weak scaling: the largest problem.
    run, matrix = candidates[0] if study.kind == "strong" else max(candidates, key=lambda c: c[0].patches or 0)
    sums = matrix_checks.RowSums(matrix)
    rec = matrix_checks.Reciprocity(matrix)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.3))
    a1.hist(sums, bins=50, color="#4c72b0")
    a1.axvline(1.0, color="k", ls="--", lw=1, label="closed scene: 1")
    a1.set_xlabel("row sum  sum_j F_ij")
    a1.set_ylabel("patches")
    a1.set_title("Row sums: min %.6f, max %.6f" % (sums.min(), sums.max()), fontsize=10)
    a1.legend(fontsize=8)
    edges = rec["edges"]
    a2.bar(edges[:-1], rec["counts"], width=np.diff(edges), align="edge", color="#55a868", edgecolor="none")
    a2.set_xlabel("log10 relative reciprocity error |A_i F_ij - A_j F_ji| / max")
    a2.set_ylabel("pairs i < j")
    a2.set_title("Reciprocity: %d pairs, %d exact, max %.2g" % (rec["pairs"], rec["exact"], rec["max"]),
                 fontsize=10)
    fig.suptitle("Form factors of %s (%s patches)" % (run.name, run.patches or "?"))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


def Build(study, out_dir):
    """Makes every plot whose data exist; returns (written paths, {plot: reason skipped})."""
    os.makedirs(out_dir, exist_ok=True)
    written, skipped = [], {}
    path = os.path.join(out_dir, "%s_speedup.png" % study.kind)
    if len(study.runs) < 2:
        skipped[path] = "one run only"
    else:
        SpeedupPlot(study, path)
        written.append(path)
    path = os.path.join(out_dir, "%s_time_split.png" % study.kind)
    TimeSplitPlot(study, path)
    written.append(path)
    for name, maker in (("residual.png", ResidualPlot), ("formfactor_diagnostics.png", DiagnosticsPlot)):
        path = os.path.join(out_dir, name)
        reason = maker(study, path)
        if reason:
            skipped[path] = reason
        else:
            written.append(path)
    return written, skipped


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("study", help="study folder (with study.json and one folder per run)")
    parser.add_argument("--out", help="where to write the plots (default: STUDY/analysis)")
    args = parser.parse_args(argv)
    try:
        study = Study(args.study)
        written, skipped = Build(study, args.out or os.path.join(args.study, "analysis"))
    except (StudyError, OSError, KeyError, ValueError) as e:
        print("plots: error: %s" % e, file=sys.stderr)
        return 2
    for path in written:
        print("wrote %s" % path)
    for path, reason in skipped.items():
        print("skipped %s: %s" % (path, reason))
    return 0


if __name__ == "__main__":
    sys.exit(main())
