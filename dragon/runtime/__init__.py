"""How the server runs the lessons: the device, the GPU decorator, the lane that runs one race or training at a time,
results computed once and shared."""
