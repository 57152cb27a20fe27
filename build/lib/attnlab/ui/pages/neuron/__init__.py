"""The Neuron view (/neuron): one query traced through q.k, scaling, softmax and the weighted sum."""
