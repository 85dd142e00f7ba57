"""Human preference data from rollouts: a labeling page over ``envkit eval``
groups, labels in SQLite, export in TRL's preference format, agreement statistics, and upload
as a Hub dataset.

    >>> from envkit.label import load_eval, LabelStore, export
    >>> folder = load_eval("evals/echo-20250101-120000")
    >>> store = LabelStore(folder.db_path)
    >>> result = export(folder, store)            # preferences.jsonl in the folder

fastapi/uvicorn (the page) and pyarrow (Parquet) come with the ``label`` extra and are imported
only where needed.
"""

from envkit.label.dataset import (
    ExportResult,
    LabelStats,
    cohen_kappa,
    export,
    fleiss_kappa,
    label_stats,
    preference_rows,
)
from envkit.label.folder import EvalFolder, EvalFolderError, Trajectory, find_eval_dir, load_eval
from envkit.label.hub import DatasetPushResult, push_dataset
from envkit.label.pairs import PAIR_MODES, Pair, select_pairs
from envkit.label.store import LABELS, Label, LabelStore, LabelStoreError

__all__ = [
    "LABELS",
    "PAIR_MODES",
    "DatasetPushResult",
    "EvalFolder",
    "EvalFolderError",
    "ExportResult",
    "Label",
    "LabelStats",
    "LabelStore",
    "LabelStoreError",
    "Pair",
    "Trajectory",
    "cohen_kappa",
    "export",
    "find_eval_dir",
    "fleiss_kappa",
    "label_stats",
    "load_eval",
    "preference_rows",
    "push_dataset",
    "select_pairs",
]
