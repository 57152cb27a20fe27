"""The masking lesson (/masking): the causal mask row by row, -inf against -1e9, empty rows."""
