"""The coding tasks and their HIDDEN tests. Edit the task here.

Each task: an id, the prompt the agent sees (with one visible example), the function name,
and hidden tests as `(args, expected)` pairs. The tests never leave the server process: the
sandbox child only receives the inputs (server/sandbox.py).
"""

TASKS = [
    {
        "id": "sum-even",
        "prompt": "Write `solve(xs)` returning the sum of the even integers in the list `xs`. "
                  "Example: solve([1, 2, 3, 4]) == 6.",
        "function": "solve",
        "tests": [(([],), 0), (([1, 3, 5],), 0), (([2, 4, 6],), 12), (([-2, 3, 10],), 8),
                  (([0, 7, 8, 11, 12],), 20), ((list(range(100)),), 2450)],
    },
    {
        "id": "palindrome",
        "prompt": "Write `solve(s)` returning True when the string `s` reads the same backwards, "
                  "ignoring case and non-alphanumeric characters. Example: solve('Abba!') is True.",
        "function": "solve",
        "tests": [(("",), True), (("a",), True), (("Race car",), True), (("abc",), False),
                  (("No 'x' in Nixon",), True), (("ab1ba2",), False)],
    },
    {
        "id": "fibonacci",
        "prompt": "Write `solve(n)` returning the n-th Fibonacci number with solve(0) == 0 and "
                  "solve(1) == 1, for 0 <= n <= 90, in well under a second. Example: solve(10) == 55.",
        "function": "solve",
        "tests": [((0,), 0), ((1,), 1), ((2,), 1), ((20,), 6765), ((50,), 12586269025),
                  ((90,), 2880067194370816120)],
    },
    {
        "id": "most-frequent",
        "prompt": "Write `solve(words)` returning the most frequent string in the non-empty list "
                  "`words`; on a tie, the alphabetically smallest. Example: solve(['b', 'a', 'b']) == 'b'.",
        "function": "solve",
        "tests": [((["x"],), "x"), ((["b", "a"],), "a"), ((["c", "b", "c", "b"],), "b"),
                  ((["dog", "cat", "dog", "emu", "cat", "dog"],), "dog"),
                  ((["z"] * 3 + ["y"] * 3 + ["a"],), "y"), (([str(i % 7) for i in range(50)],), "0")],
    },
    {
        "id": "gcd",
        "prompt": "Write `solve(a, b)` returning the greatest common divisor of the non-negative "
                  "integers `a` and `b` (solve(0, 0) == 0). Example: solve(12, 18) == 6.",
        "function": "solve",
        "tests": [((0, 0), 0), ((0, 7), 7), ((7, 0), 7), ((48, 36), 12), ((17, 5), 1),
                  ((2 ** 40, 2 ** 35 * 3), 2 ** 35)],
    },
]
