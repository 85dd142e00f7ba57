"""Text-to-SQL: write a SELECT, graded by comparing its result rows with a reference query's."""
import random
import sqlite3
from typing import List
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class SqlAction(Action):
    sql: str = ""


class SqlObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

FIRST = ["Ada", "Ben", "Cy", "Dee", "Eve", "Finn", "Gus", "Hal", "Ivy", "Jo", "Kai", "Lu"]
DEPTS = ["ops", "sales", "eng"]
QUESTION = ("Table emp(name TEXT, dept TEXT, salary INTEGER). Write one SQLite SELECT returning the names "
            "of employees who earn more than the average salary of their own department, ordered by name.")
REFERENCE = ("SELECT e.name FROM emp e WHERE e.salary > "
             "(SELECT AVG(salary) FROM emp d WHERE d.dept = e.dept) ORDER BY e.name")


def instance(rng: random.Random, balanced: bool) -> List[tuple]:
    names = rng.sample(FIRST, 12)
    base = sorted(rng.sample(range(40, 120), 4))
    rows = []
    for i, dept in enumerate(DEPTS):
        pay = base if balanced else [s + 25 * i for s in base]
        for j in range(4):
            rows.append((names[4 * i + j], dept, pay[(j + i) % 4] * 1000))
    return rows


def make_task(seed: Optional[int]) -> Dict[str, Any]:
    rng = random.Random(seed)
    sample = instance(rng, balanced=True)
    # also compare on instances where department averages differ, to separate look-alike queries
    return {"question": QUESTION, "sample_rows": sample,
            "_instances": [sample, instance(rng, balanced=False), instance(rng, balanced=False)]}


def run(sql: str, rows: List[tuple]) -> List[tuple]:
    con = sqlite3.connect(":memory:")
    try:
        con.execute("CREATE TABLE emp(name TEXT, dept TEXT, salary INTEGER)")
        con.executemany("INSERT INTO emp VALUES (?, ?, ?)", rows)
        return con.execute(sql).fetchall()
    finally:
        con.close()


def grade(action, task):
    sql = action.sql.strip().rstrip(";")
    if not sql.lower().startswith("select") or ";" in sql:
        return 0.0, "one SELECT statement only"
    for rows in task["_instances"]:
        try:
            if run(sql, rows) != run(REFERENCE, rows):
                return 0.0, "result differs from the reference"
        except sqlite3.Error as exc:
            return 0.0, f"SQL error: {exc}"
    return 1.0, "results match"


class SqlEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SqlObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return SqlObservation(task=public(self._task))

    def step(self, action: SqlAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SqlObservation:
        if self._task is None or self._done:
            return SqlObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return SqlObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

def policy(observation: dict) -> dict:
    return {"sql": REFERENCE}


app = create_app(SqlEnv, SqlAction, SqlObservation, env_name="sql_dept_avg",
                 max_concurrent_envs=8)
