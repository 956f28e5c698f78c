"""A/B experiments: arms (configs) run side by side on the same tasks, scored and compared."""
