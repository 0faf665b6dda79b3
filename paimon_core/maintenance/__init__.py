"""Self-optimizing maintenance: table state, the planner, pass scheduling, lag alerts and the batch executor."""
