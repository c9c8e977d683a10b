"""Drawings the rooms share: the dragon, heat maps, charts, tensors, the 72-heads grid."""
