"""UI strings: one folder per language, one TOML file per page or topic; key = "<file>.<name>"."""
