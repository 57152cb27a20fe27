"""Plotly figure builders (no Streamlit): matrices, line charts, lesson and benchmark charts, any model's attention.

One palette (`palette`), one way to make outside text safe (`text`), one builder for "one matrix
or a grid of heads" (`grid.matrices_figure`). Pages pass translated titles; figures escape them.
"""

from attnlab.figures.attnfile import head_view, model_view, query_key_map
from attnlab.figures.grid import grid_figure, matrices_figure
from attnlab.figures.heads import head_columns_figure, with_head_strip
from attnlab.figures.matrix import dot_product_hover, matrix_figure, projector, vector
from attnlab.figures.text import dim_labels, label

__all__ = [
    "dim_labels",
    "dot_product_hover",
    "grid_figure",
    "head_columns_figure",
    "head_view",
    "label",
    "matrices_figure",
    "matrix_figure",
    "model_view",
    "projector",
    "query_key_map",
    "vector",
    "with_head_strip",
]
