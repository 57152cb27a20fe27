"""The app's machinery every page runs on: URL state, languages, inert text, widgets, the page registry, the shell."""
