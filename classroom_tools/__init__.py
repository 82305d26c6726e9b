"""Tools for the classroom, run against a real server in Debian's Chromium: `browser_kit` (start the app,
list its pages, watch a browser page), `many_students` (a whole class at once) and `measure_speed`
(start-up and interaction times). Run from the repository root: `python -m classroom_tools.many_students`."""
