"""Question-blind play: what an agent can send without solving the task.

A trainer is an optimiser: it finds whatever route to reward the environment leaves open. This
package holds the pieces that let envkit play like one, with no I/O of their own:

* :mod:`envkit.blind.schema` — walking a JSON Schema (local ``$ref``, one-item ``allOf``);
* :mod:`envkit.blind.shapes` — every action shape an environment offers: the ``/schema``
  action, and tool calls whose ``arguments`` follow each tool's own input schema (from a tool
  list in the observation or ``tools/list``);
* :mod:`envkit.blind.slots` — where an answer goes in an action (its string and number
  leaves) and how to fill it;
* :mod:`envkit.blind.library` — the question-blind policies, each declared once with its
  name, what it sends and where the idea comes from.

The validator (:mod:`envkit.validation.rules.blind_play`) and ``envkit eval`` play them over
the wire.
"""
