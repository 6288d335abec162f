#!/usr/bin/env python3
"""Tables of a scaling study, like the reference paper's: time per phase and its share of the total, speedup and
parallel efficiency per phase, and a consistency check of the matrices across runs.

    /usr/bin/python3 analysis/scaling_tables.py STUDY_DIR [--out DIR] [--skip-matrix-check]

Writes into STUDY_DIR/analysis/ (or --out), with KIND = strong or weak:
  KIND_phases.csv      one row per run and phase (the paper's phases and the total): ranks, subdiv, patches,
                       phase, seconds, share, speedup, efficiency
  KIND_raw_phases.csv  one row per run and radiosity timer: min/avg/max over ranks and share of the total
  KIND_runs.csv        one row per run: allocation, total and wall time, matrix checks (row sums, reciprocity,
                       difference from the first run of the same size), solver iterations
  KIND_scaling.md      the same as Markdown tables
Exit code 2 with one line naming the file when the study is incomplete or malformed. See analysis/README.md.
"""

import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matrix_checks  # noqa: E402
from study import Scaling, Study, StudyError  # noqa: E402


def Fmt(x, digits=3):
    return "-" if x is None else "%.*f" % (digits, x)


def MatrixRows(study, check_matrices):
    """Per run: row sums, reciprocity and the difference from the first run with the same number of patches."""
    out = {}
    first_of_size = {}
    for run in study.runs:
        info = {"file": None}
        path = run.FormFactorFile()
        if path is not None:
            info["file"] = os.path.relpath(path, study.folder)
            sums = matrix_checks.RowSums(path)
            info["row_sum_min"], info["row_sum_max"] = float(sums.min()), float(sums.max())
            rec = matrix_checks.Reciprocity(path)
            info["reciprocity_max"], info["reciprocity_mean"] = rec["max"], rec["mean"]
            n = matrix_checks.MatrixSize(path)
            if check_matrices:
                if n in first_of_size:
                    ref_run, ref_path = first_of_size[n]
                    identical, diff = matrix_checks.Compare(ref_path, path)
                    info["same_as"], info["identical"], info["max_abs_diff"] = ref_run.name, identical, diff
                else:
                    first_of_size[n] = (run, path)
        rad = run.RadiosityFile()
        if rad is not None:
            import h5py
            with h5py.File(rad, "r") as f:
                if "radiosity/residual" in f:
                    info["iterations"] = int(f["radiosity/residual"].shape[0])
                    info["final_residual"] = float(f["radiosity/residual"][-1]) if info["iterations"] else None
        out[run.name] = info
    return out


def WriteCsv(path, header, rows):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def Build(study, out_dir, check_matrices=True):
    """Computes and writes every table; returns the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    kind = study.kind
    cats = study.Categories()
    written = []

    # Long table: one row per run and phase.
    rows = []
    for run in study.runs:
        secs = run.CategorySeconds()
        for c in cats + ["total"]:
            getter = (lambda r: r.total) if c == "total" else (lambda r, c=c: r.CategorySeconds()[c])
            s = run.total if c == "total" else secs[c]
            speedup, eff = Scaling(study, run, getter)
            rows.append([run.name, run.ranks, run.subdiv if run.subdiv is not None else "", run.patches or "", c,
                         "%.6f" % s, "%.6f" % (s / run.total if run.total > 0 else 0),
                         "" if speedup is None else "%.6f" % speedup, "" if eff is None else "%.6f" % eff])
    path = os.path.join(out_dir, "%s_phases.csv" % kind)
    WriteCsv(path, ["run", "ranks", "subdiv", "patches", "phase", "seconds", "share", "speedup", "efficiency"], rows)
    written.append(path)

    rows = []
    for run in study.runs:
        for name in run.phase_order:
            t = run.phases[name]
            rows.append([run.name, run.ranks, name, "%.6f" % t["min"], "%.6f" % t["avg"], "%.6f" % t["max"],
                         "%.6f" % (t["max"] / run.total if run.total > 0 else 0)])
    path = os.path.join(out_dir, "%s_raw_phases.csv" % kind)
    WriteCsv(path, ["run", "ranks", "phase", "min", "avg", "max", "share"], rows)
    written.append(path)

    matrices = MatrixRows(study, check_matrices)
    rows = []
    for run in study.runs:
        m = matrices[run.name]
        rows.append([run.name, run.ranks, run.nodes if run.nodes is not None else "", run.threads or "",
                     run.subdiv if run.subdiv is not None else "", run.patches or "", "%.6f" % run.total,
                     "" if run.wall is None else "%.3f" % run.wall, m.get("file") or "",
                     _Num(m.get("row_sum_min")), _Num(m.get("row_sum_max")), _Num(m.get("reciprocity_max")),
                     m.get("same_as", ""), _Bool(m.get("identical")), _Num(m.get("max_abs_diff")),
                     m.get("iterations", ""), _Num(m.get("final_residual"))])
    path = os.path.join(out_dir, "%s_runs.csv" % kind)
    WriteCsv(path, ["run", "ranks", "nodes", "threads_per_rank", "subdiv", "patches", "total_seconds",
                    "wall_seconds", "matrix_file", "row_sum_min", "row_sum_max", "reciprocity_max_rel",
                    "compared_with", "matrix_identical", "matrix_max_abs_diff", "solver_iterations",
                    "final_residual"], rows)
    written.append(path)

    path = os.path.join(out_dir, "%s_scaling.md" % kind)
    with open(path, "w") as fh:
        fh.write(Markdown(study, cats, matrices))
    written.append(path)
    return written


def _Num(x):
    return "" if x is None else "%.6g" % x


def _Bool(x):
    return "" if x is None else ("yes" if x else "no")


def Markdown(study, cats, matrices):
    kind = study.kind
    lines = ["# %s scaling" % kind.capitalize(), ""]
    described = study.Describe()
    if described:
        lines += [described + ".", ""]
    lines += ["Times in seconds on the slowest rank (max over ranks), share of the total in brackets. Phases: "
              "I/O = scene load and output; device memory = GPU allocations and copies; kernel = form "
              "factors; visibility = acceleration structure and shadow rays; solve = radiosity iterations"
              + ("; render = image" if "render" in cats else "")
              + ("; other = untimed rest" if "other" in cats else "") + ".", ""]

    head = ["ranks", "nodes", "patches"] + cats + ["total"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for run in study.runs:
        secs = run.CategorySeconds()
        cells = [str(run.ranks), str(run.nodes or "-"), str(run.patches or "-")]
        for c in cats:
            share = 100 * secs[c] / run.total if run.total > 0 else 0
            cells.append("%.3f (%.1f %%)" % (secs[c], share))
        cells.append("%.3f" % run.total)
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")

    ref = study.reference
    if kind == "strong":
        lines += ["Speedup T(%d) / T(P) and parallel efficiency speedup / (P / %d), per phase." % (ref.ranks, ref.ranks), ""]
        titles = ("Speedup", "Efficiency")
    else:
        lines += ["Weak scaling: the work is N^2 patch pairs, so the work per rank W/P grows with N^2/P. "
                  "Efficiency = (T_ref / T) * (W/P) / (W_ref/P_ref) (time per unit of work per rank, against %d "
                  "rank(s)); scaled speedup = efficiency * P / P_ref. Plain time ratio T_ref / T in the runs "
                  "table." % ref.ranks, ""]
        titles = ("Scaled speedup", "Efficiency")
    for index, title in enumerate(titles):
        head = ["ranks", "ideal" if index == 0 else "patches"] + cats + ["total"]
        lines.append("**%s**" % title)
        lines.append("")
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for run in study.runs:
            cells = [str(run.ranks), "%.2f" % (run.ranks / ref.ranks) if index == 0 else str(run.patches or "-")]
            for c in cats + ["total"]:
                getter = (lambda r: r.total) if c == "total" else (lambda r, c=c: r.CategorySeconds()[c])
                value = Scaling(study, run, getter)[index]
                cells.append(Fmt(value, 2))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")

    lines += ["**Runs**", ""]
    head = ["run", "ranks", "patches", "wall s", "T_ref / T", "row sums min / max", "reciprocity (max rel.)",
            "same matrix as", "solver iterations"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for run in study.runs:
        m = matrices[run.name]
        if "same_as" in m:
            same = "%s: %s" % (m["same_as"], "bitwise identical" if m["identical"]
                               else "max abs diff %.3g" % m["max_abs_diff"])
        elif any(other.get("same_as") == run.name for other in matrices.values()):
            same = "(reference)"
        else:
            same = "-"
        sums = "-" if "row_sum_min" not in m else "%.6f / %.6f" % (m["row_sum_min"], m["row_sum_max"])
        rec = "-" if "reciprocity_max" not in m else "%.2g" % m["reciprocity_max"]
        cells = [run.name, str(run.ranks), str(run.patches or "-"), "-" if run.wall is None else "%.2f" % run.wall,
                 "%.2f" % (ref.total / run.total) if run.total > 0 else "-", sums, rec, same,
                 str(m.get("iterations", "-"))]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("study", help="study folder (with study.json and one folder per run)")
    parser.add_argument("--out", help="where to write the tables (default: STUDY/analysis)")
    parser.add_argument("--skip-matrix-check", action="store_true",
                        help="do not compare the runs' matrices (reading large ones takes time)")
    args = parser.parse_args(argv)
    try:
        study = Study(args.study)
        written = Build(study, args.out or os.path.join(args.study, "analysis"), not args.skip_matrix_check)
    except (StudyError, OSError, KeyError, ValueError) as e:
        print("scaling_tables: error: %s" % e, file=sys.stderr)
        return 2
    for path in written:
        print("wrote %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
