"""The cost lesson (/cost): time and memory against T, measured live, and their log-log slopes."""
