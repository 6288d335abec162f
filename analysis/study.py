"""Reading a scaling study: the study folder, one results folder per run, and each run's timings.

A study folder (written by jobs/slurm/{strong,weak}_scaling.sh or jobs/local/...) holds `study.json` and one
folder per run with `timings.json` (radiosity's per-phase min/avg/max over ranks), `job.json` (allocation and
wall time, from the batch script) and the command's outputs (`formfactors.h5`, or `radiosity.h5` for `run`).
A folder of run folders without study.json works too (every subfolder with a timings.json is a run).

Raw phase names are grouped into the reference paper's phases (see CATEGORIES and Category()); a phase is
timed on the slowest rank (the max over ranks), which is what the job waits for.
"""

import json
import os

# The reference paper's phases, then the ones a radiosity `run` adds, then whatever is left.
CORE_CATEGORIES = ["I/O", "device memory", "kernel", "visibility", "solve"]
EXTRA_CATEGORIES = ["render", "other"]
CATEGORIES = CORE_CATEGORIES + EXTRA_CATEGORIES


class StudyError(Exception):
    """A study folder that cannot be analysed: missing or malformed files (message names the file)."""


def Category(phase):
    """The paper's phase that a radiosity timer belongs to (None for the total)."""
    p = phase.lower()
    if p == "total":
        return None
    if p.startswith("solve"):
        return "solve"
    if p.startswith("render"):
        return "render"
    if "i/o" in p or "load" in p or "read" in p or "write" in p:
        return "I/O"
    if any(k in p for k in ("device", "memory", "transfer", "copy", "h2d", "d2h")):
        return "device memory"
    # The acceleration structure exists for the shadow rays: it is part of the visibility cost.
    if any(k in p for k in ("visib", "ray", "acceleration", "bvh")):
        return "visibility"
    # The pair exchange delivers the kernel's results for pairs across ranks (each pair computed once).
    if any(k in p for k in ("kernel", "unoccluded", "form factor", "pair exchange")):
        return "kernel"
    return "other"


def _ReadJson(path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except OSError as e:
        raise StudyError("%s: cannot read (%s)" % (path, e.strerror))
    except ValueError as e:
        raise StudyError("%s: not valid JSON (%s)" % (path, e))


class Run:
    """One run of a study: its allocation, timings and output files."""

    def __init__(self, folder, name, subdiv=None):
        self.folder = folder
        self.name = name
        self.subdiv = subdiv
        timings_path = os.path.join(folder, "timings.json")
        if not os.path.exists(timings_path):
            raise StudyError("%s: missing (did the run %s fail? see its job log in %s)" % (timings_path, name, folder))
        t = _ReadJson(timings_path)
        try:
            self.ranks = int(t["ranks"])
            self.command = str(t.get("command", ""))
            self.phases = {p["name"]: {"min": float(p["min"]), "avg": float(p["avg"]), "max": float(p["max"])}
                           for p in t["phases"]}
            self.phase_order = [p["name"] for p in t["phases"]]
            self.parameters = dict(t.get("parameters", {}))
            self.counters = dict(t.get("counters", {}))
        except (KeyError, TypeError, ValueError) as e:
            raise StudyError("%s: unexpected layout (%s)" % (timings_path, e))
        if "total" not in self.phases:
            raise StudyError("%s: no 'total' phase" % timings_path)
        self.total = self.phases["total"]["max"]
        self.patches = int(self.parameters["patches"]) if "patches" in self.parameters else None
        self.threads = self.parameters.get("threads per rank")
        job_path = os.path.join(folder, "job.json")
        self.job = _ReadJson(job_path) if os.path.exists(job_path) else {}
        self.nodes = self.job.get("nodes")
        self.wall = self.job.get("wall_seconds")

    def CategorySeconds(self):
        """Seconds per paper phase (sum of its timers, each on its slowest rank); 'other' also takes the part
        of the total that no timer covers."""
        out = {c: 0.0 for c in CATEGORIES}
        for name, t in self.phases.items():
            c = Category(name)
            if c is not None:
                out[c] += t["max"]
        out["other"] += max(0.0, self.total - sum(out.values()))
        return out

    def FormFactorFile(self):
        """The HDF5 file of this run that holds /formfactors/F, or None."""
        import h5py
        for candidate in ("formfactors.h5", "radiosity.h5"):
            path = os.path.join(self.folder, candidate)
            if os.path.exists(path):
                with h5py.File(path, "r") as f:
                    if "formfactors/F" in f:
                        return path
        return None

    def RadiosityFile(self):
        path = os.path.join(self.folder, "radiosity.h5")
        return path if os.path.exists(path) else None

    def Label(self):
        return "%d rank%s" % (self.ranks, "" if self.ranks == 1 else "s")


class Study:
    """All runs of a study folder, ordered by rank count."""

    def __init__(self, folder):
        if not os.path.isdir(folder):
            raise StudyError("%s: not a folder" % folder)
        self.folder = os.path.abspath(folder)
        meta_path = os.path.join(folder, "study.json")
        self.meta = _ReadJson(meta_path) if os.path.exists(meta_path) else {}
        runs = []
        if self.meta.get("runs"):
            for r in self.meta["runs"]:
                runs.append(Run(os.path.join(folder, r["name"]), r["name"], r.get("subdiv")))
        else:
            for name in sorted(os.listdir(folder)):
                sub = os.path.join(folder, name)
                if os.path.isfile(os.path.join(sub, "timings.json")):
                    runs.append(Run(sub, name))
        if not runs:
            raise StudyError("%s: no runs (no study.json and no subfolder with a timings.json)" % folder)
        runs.sort(key=lambda r: (r.ranks, r.patches or 0))
        self.runs = runs
        kind = self.meta.get("kind")
        if kind not in ("strong", "weak"):
            # Without study.json: the same problem on every run is a strong-scaling study.
            kind = "strong" if len({r.patches for r in runs}) == 1 else "weak"
        self.kind = kind
        self.reference = runs[0]

    def Categories(self):
        """The paper's phases always, then render/other where some run spent time in them."""
        shown = list(CORE_CATEGORIES)
        for c in EXTRA_CATEGORIES:
            if any(r.CategorySeconds()[c] > 0 for r in self.runs):
                shown.append(c)
        return shown

    def Describe(self):
        m = self.meta
        parts = []
        if m.get("scene"):
            parts.append("scene %s" % m["scene"])
        if m.get("command"):
            parts.append("`radiosity %s`" % m["command"])
        if m.get("extra_args"):
            parts.append("options `%s`" % " ".join(m["extra_args"]))
        if m.get("threads_per_rank"):
            parts.append("%s thread(s) per rank" % m["threads_per_rank"])
        if m.get("mode"):
            parts.append("%s mode" % m["mode"])
        return ", ".join(parts)


def Work(run):
    """Work of a run in patch pairs (N^2): each form factor and each matrix entry of the solve is one pair."""
    return float(run.patches) ** 2 if run.patches else None


def Scaling(study, run, seconds_of):
    """(speedup, efficiency) of `run` against the study's reference run for one timed quantity.

    Strong scaling: speedup = T_ref / T, efficiency = speedup / (P / P_ref).
    Weak scaling (the problem grows with the ranks): efficiency = (T_ref / T) * (W / P) / (W_ref / P_ref) with
    W = N^2 pairs, i.e. the time per unit of work per rank compared with the reference; the scaled speedup is
    efficiency * P / P_ref. Both are None where a time is zero (nothing to scale)."""
    ref = study.reference
    t_ref, t = seconds_of(ref), seconds_of(run)
    if not t_ref or not t or t_ref <= 0 or t <= 0:
        return None, None
    ideal = run.ranks / ref.ranks
    if study.kind == "strong":
        speedup = t_ref / t
        return speedup, speedup / ideal
    w_ref, w = Work(ref), Work(run)
    if not w_ref or not w:
        return None, None
    efficiency = (t_ref / t) * (w / run.ranks) / (w_ref / ref.ranks)
    return efficiency * ideal, efficiency
