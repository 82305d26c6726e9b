"""The app's shared UI: page setup and navigation, translations, URL state, code panels, charts, animation.

Pages (app.py and pages/*.py) import from here and from softmax_core; they never import each other.
"""
