"""The Gradio-facing layer: strings, drawings and event handlers (the app wires them)."""
