"""The soft dictionary lesson (/soft-dictionary): a hard lookup, the weighted one, temperature."""
