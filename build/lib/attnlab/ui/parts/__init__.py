"""Parts more than one page draws: the stage table, head pickers, the model views, the Playground's shared state."""
